package conformance

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"testing"
	"time"
)

// client is a minimal synchronous memcached client for the tests that
// generate their own traffic. It reads replies unit by unit (see unit) and
// never interprets more than it must.
type client struct {
	conn net.Conn
	r    *bufio.Reader
}

func dial(t testing.TB, addr string) *client {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{conn: c, r: bufio.NewReaderSize(c, 64<<10)}
}

// readUnit reads one reply line and, for VALUE and VA lines, its data block.
// It rejects a line not ended by \r\n and a data block not ended by \r\n.
func (c *client) readUnit() (unit, error) {
	raw, err := c.r.ReadBytes('\n')
	if err != nil {
		return unit{}, fmt.Errorf("reading a reply line (got %q): %w", raw, err)
	}
	if !bytes.HasSuffix(raw, []byte("\r\n")) {
		return unit{}, fmt.Errorf("reply line %q does not end in \\r\\n", raw)
	}
	line := raw[:len(raw)-2]
	if n, ok := dataLen(line); ok {
		data := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, data); err != nil {
			return unit{}, fmt.Errorf("reading the %d-byte data block of %q: %w", n, line, err)
		}
		if !bytes.HasSuffix(data, []byte("\r\n")) {
			return unit{}, fmt.Errorf("data block of %q does not end in \\r\\n", line)
		}
		raw = append(raw, data...)
	}
	return unit{raw: raw, line: raw[:len(line)]}, nil
}

// readRetrieval reads the reply to get/gets: VALUE units up to END, or a
// single error line.
func (c *client) readRetrieval() ([]unit, error) {
	var units []unit
	for {
		u, err := c.readUnit()
		if err != nil {
			return units, err
		}
		units = append(units, u)
		if !bytes.HasPrefix(u.line, []byte("VALUE ")) {
			return units, nil // END, or an error that ends the reply
		}
	}
}

// do writes req and reads a one-unit reply.
func (c *client) do(req string) (unit, error) {
	_ = c.conn.SetDeadline(time.Now().Add(stepTimeout))
	if _, err := io.WriteString(c.conn, req); err != nil {
		return unit{}, err
	}
	return c.readUnit()
}

// get writes a get for keys and returns its reply units.
func (c *client) get(keys string) ([]unit, error) {
	_ = c.conn.SetDeadline(time.Now().Add(stepTimeout))
	if _, err := io.WriteString(c.conn, "get "+keys+"\r\n"); err != nil {
		return nil, err
	}
	return c.readRetrieval()
}

// mustWork checks that addr still stores and serves a value on c.
func mustWork(t *testing.T, c *client, key string) {
	t.Helper()
	u, err := c.do("set " + key + " 0 0 2\r\nok\r\n")
	if err != nil || string(u.line) != "STORED" {
		t.Fatalf("set %s: %q, %v", key, u.raw, err)
	}
	units, err := c.get(key)
	want := "VALUE " + key + " 0 2\r\nok\r\n"
	if err != nil || len(units) != 2 || string(units[0].raw) != want || string(units[1].line) != "END" {
		t.Fatalf("get %s: %q, %v; want %q then END", key, units, err, want)
	}
}
