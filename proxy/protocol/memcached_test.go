package protocol

import (
	"github.com/strata-cache/strata/internal/testbin"

	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A real memcached, started once for the package, is the oracle of the
// differential tests: the same bytes go to it and to the parser, and the
// replies must match byte for byte.

var memcachedAddr string

func TestMain(m *testing.M) {
	stop := startMemcached()
	code := m.Run()
	stop()
	os.Exit(code)
}

// startMemcached starts memcached on a free loopback port if the binary
// exists; tests that need it skip otherwise.
func startMemcached() (stop func()) {
	bin, err := exec.LookPath("memcached")
	if err != nil {
		return func() {}
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return func() {}
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := []string{"-l", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "0", "-t", "1", "-m", "64"}
	if os.Geteuid() == 0 {
		args = append(args, "-u", "nobody")
	}
	cmd := exec.Command(bin, args...)
	if err := cmd.Start(); err != nil {
		return func() {}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	deadline := time.Now().Add(10 * time.Second)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			memcachedAddr = addr
			break
		}
		<-tick.C
	}
	return func() {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func needMemcached(t testing.TB) {
	t.Helper()
	if memcachedAddr == "" {
		testbin.Require(t, "memcached", "STRATA_SKIP_MEMCACHED", "memcached")
		t.Fatal("memcached is installed but did not start")
	}
}

var sentinelSeq atomic.Uint64

// mcExchange sends data to memcached on a fresh connection, followed by a
// sentinel request whose unique reply marks the end of data's replies. It
// returns the replies to data and whether memcached closed the connection.
// Data that does not end with a newline must make memcached close.
func mcExchange(t testing.TB, data []byte) (reply []byte, closed bool) {
	t.Helper()
	needMemcached(t)
	c, err := net.DialTimeout("tcp", memcachedAddr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial memcached: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	id := sentinelSeq.Add(1)
	sentinel := fmt.Appendf(nil, "mg strata-sentinel-%d O%d\r\n", id, id)
	want := fmt.Appendf(nil, "EN O%d\r\n", id)
	if !bytes.HasSuffix(data, []byte("\n")) {
		// An unfinished line would swallow the sentinel: such inputs are
		// expected to make memcached close, so read until it does.
		sentinel, want = nil, nil
	}
	go func() {
		// Writes may fail once memcached has closed: that is the result.
		c.Write(data)
		c.Write(sentinel)
	}()
	var got []byte
	buf := make([]byte, 64<<10)
	for {
		n, err := c.Read(buf)
		got = append(got, buf[:n]...)
		if want != nil && bytes.HasSuffix(got, want) {
			return got[:len(got)-len(want)], false
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("memcached did not answer %q; got %q", trunc(data), trunc(got))
			}
			if err == io.EOF || isReset(err) {
				return got, true
			}
			t.Fatalf("read memcached: %v", err)
		}
	}
}

func isReset(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe)
}

func trunc(b []byte) []byte {
	if len(b) > 300 {
		return append(append([]byte{}, b[:300]...), "..."...)
	}
	return b
}
