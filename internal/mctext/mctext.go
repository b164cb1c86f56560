package mctext

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// DefaultTimeout bounds the dial and each exchange of a Conn from Dial:
// generous, the machine running the tests is shared.
const DefaultTimeout = 5 * time.Second

// Conn is one text-protocol connection owned by one test goroutine.
type Conn struct {
	t       testing.TB
	nc      net.Conn
	r       *bufio.Reader
	timeout time.Duration // deadline of each Send and of the reads after it
}

// Dial connects to addr with DefaultTimeout; see DialTimeout.
func Dial(t testing.TB, addr string) *Conn { return DialTimeout(t, addr, DefaultTimeout) }

// DialTimeout connects to addr, failing t if it cannot; within bounds the
// dial and each exchange. The connection closes when the test ends, or
// earlier by Close.
func DialTimeout(t testing.TB, addr string, within time.Duration) *Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, within)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return &Conn{t: t, nc: nc, r: bufio.NewReaderSize(nc, 64<<10), timeout: within}
}

// Close closes the connection; closing twice is harmless.
func (c *Conn) Close() { _ = c.nc.Close() }

// Send writes req as given (the caller spells the "\r\n"s) and starts the
// exchange's deadline.
func (c *Conn) Send(req string) {
	c.t.Helper()
	_ = c.nc.SetDeadline(time.Now().Add(c.timeout))
	if _, err := io.WriteString(c.nc, req); err != nil {
		c.t.Fatalf("write %q: %v", req, err)
	}
}

// ReadLine reads one reply line without its "\r\n".
func (c *Conn) ReadLine() string {
	c.t.Helper()
	l, err := c.r.ReadString('\n')
	if err != nil {
		c.t.Fatalf("read: %v (so far %q)", err, l)
	}
	return strings.TrimSuffix(l, "\r\n")
}

// ReadBlock reads a data block of n bytes and the "\r\n" after it.
func (c *Conn) ReadBlock(n int) string {
	c.t.Helper()
	buf := make([]byte, n+2)
	if _, err := io.ReadFull(c.r, buf); err != nil {
		c.t.Fatalf("read a block of %d bytes: %v", n, err)
	}
	if string(buf[n:]) != "\r\n" {
		c.t.Fatalf("block of %d bytes not followed by \\r\\n: %q", n, buf)
	}
	return string(buf[:n])
}

// Line sends req and returns the one reply line.
func (c *Conn) Line(req string) string {
	c.t.Helper()
	c.Send(req)
	return c.ReadLine()
}

// Do sends req and reads reply lines up to and including the one for which
// last returns true. Data blocks are read as lines, so it suits replies
// whose values hold no newline.
func (c *Conn) Do(req string, last func(string) bool) []string {
	c.t.Helper()
	c.Send(req)
	var lines []string
	for {
		l, err := c.r.ReadString('\n')
		if err != nil {
			c.t.Fatalf("reading the reply to %q: %v (so far %q)", req, err, lines)
		}
		lines = append(lines, strings.TrimSuffix(l, "\r\n"))
		if last(lines[len(lines)-1]) {
			return lines
		}
	}
}

// EndsAtEND ends a Do at the END of a retrieval or stats reply, or at an
// error line that replaces it.
func EndsAtEND(l string) bool {
	return l == "END" || l == "ERROR" || strings.HasPrefix(l, "SERVER_ERROR") || strings.HasPrefix(l, "CLIENT_ERROR")
}

// TryGet gets one key: its value and true, "" and false on a miss, or the
// error line that came instead of a value.
func (c *Conn) TryGet(key string) (value string, ok bool, errLine string) {
	c.t.Helper()
	l := c.Line("get " + key + "\r\n")
	if l == "END" {
		return "", false, ""
	}
	f := strings.Fields(l)
	if len(f) < 4 || f[0] != "VALUE" {
		return "", false, l
	}
	n, err := strconv.Atoi(f[3])
	if err != nil {
		c.t.Fatalf("get %s: %q", key, l)
	}
	value = c.ReadBlock(n)
	if end := c.ReadLine(); end != "END" {
		c.t.Fatalf("get %s: %q after the value", key, end)
	}
	return value, true, ""
}

// Get gets one key: its value and true, or "" and false on a miss. Any other
// reply fails the test.
func (c *Conn) Get(key string) (string, bool) {
	c.t.Helper()
	v, ok, errLine := c.TryGet(key)
	if errLine != "" {
		c.t.Fatalf("get %s: %q", key, errLine)
	}
	return v, ok
}

// Set stores key with flags 0 and the TTL in seconds, and returns the reply
// line (STORED or an error).
func (c *Conn) Set(key, value string, ttl int) string {
	c.t.Helper()
	return c.Line(fmt.Sprintf("set %s 0 %d %d\r\n%s\r\n", key, ttl, len(value), value))
}

// Delete deletes key and returns the reply line.
func (c *Conn) Delete(key string) string {
	c.t.Helper()
	return c.Line("delete " + key + "\r\n")
}

// Stats returns the STAT lines of "stats [args]" by name.
func (c *Conn) Stats(args string) map[string]string {
	c.t.Helper()
	req := "stats\r\n"
	if args != "" {
		req = "stats " + args + "\r\n"
	}
	out := map[string]string{}
	for _, l := range c.Do(req, EndsAtEND) {
		if f := strings.SplitN(l, " ", 3); len(f) == 3 && f[0] == "STAT" {
			out[f[1]] = f[2]
		}
	}
	return out
}
