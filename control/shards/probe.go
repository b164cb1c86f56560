package shards

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
)

// Wire talks to the tier's memcached servers directly, outside the data
// plane: the leader's own probe (its half of the evidence that a server is
// dead) and the flush of a returning server. Each call dials, asks one
// question and closes, so a hung server costs one timeout, never a
// connection the data plane needs. The Runner's rounds probe through
// keptProbes, on a connection of their own kept per server.
type Wire struct {
	Timeout time.Duration
}

var _ Flusher = Wire{}

// Probe reports whether addr answers "version" within the timeout.
func (w Wire) Probe(ctx context.Context, addr string) bool {
	line, err := w.ask(ctx, addr, versionReq)
	return answersVersion(line, err)
}

// versionReq is the probe's question; answersVersion judges its answer.
const versionReq = "version\r\n"

func answersVersion(line string, err error) bool {
	return err == nil && strings.HasPrefix(line, "VERSION ")
}

// Flush empties addr with flush_all.
func (w Wire) Flush(ctx context.Context, addr string) error {
	line, err := w.ask(ctx, addr, "flush_all\r\n")
	if err != nil {
		return err
	}
	if line != "OK" {
		return fmt.Errorf("flush_all at %s: %q", addr, line)
	}
	return nil
}

func (w Wire) ask(ctx context.Context, addr, req string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, w.Timeout)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return "", err
	}
	defer c.Close()
	return exchange(ctx, c, bufio.NewReaderSize(c, 256), req)
}

// exchange writes req on c and reads one reply line from r (c's reader),
// both by ctx's deadline.
func exchange(ctx context.Context, c net.Conn, r *bufio.Reader, req string) (string, error) {
	dl, _ := ctx.Deadline()
	_ = c.SetDeadline(dl)
	if _, err := c.Write([]byte(req)); err != nil {
		return "", err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// keptProbes is the leader's probe on one connection kept per server:
// an idle leader probes every member each ProbeInterval, and a fresh
// connection each time (dial, close, a new connection for the server to
// accept) was most of what a probe cost. A probe that fails on a kept
// connection (the server restarted, or closed it) dials once more
// within the same timeout, so a probe says what Wire.Probe would: the
// server answers now, on a connection, within the timeout. Only the
// round's goroutine calls probeAll and close; probeAll's own goroutines
// take distinct servers' connections.
type keptProbes struct {
	wire  Wire
	mu    sync.Mutex // guards conns
	conns map[string]*probeConn
}

type probeConn struct {
	net.Conn
	r *bufio.Reader
}

func newKeptProbes(w Wire) *keptProbes { return &keptProbes{wire: w, conns: map[string]*probeConn{}} }

// probeAll probes every address concurrently, waits for all, and closes
// the connections of servers no longer listed.
func (k *keptProbes) probeAll(ctx context.Context, addrs []string) map[string]bool {
	k.mu.Lock()
	for a, c := range k.conns {
		if !slices.Contains(addrs, a) {
			_ = c.Close()
			delete(k.conns, a)
		}
	}
	k.mu.Unlock()
	out := make(map[string]bool, len(addrs))
	if len(addrs) == 1 { // the usual pool of one: no goroutine to start and wait for
		out[addrs[0]] = k.probe(ctx, addrs[0])
		return out
	}
	var mu sync.Mutex // guards out
	var wg sync.WaitGroup
	for _, a := range addrs {
		wg.Add(1)
		go func(a string) {
			defer wg.Done()
			ok := k.probe(ctx, a)
			mu.Lock()
			out[a] = ok
			mu.Unlock()
		}(a)
	}
	wg.Wait()
	return out
}

// probe asks addr "version" on its kept connection, or a new one.
func (k *keptProbes) probe(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, k.wire.Timeout)
	defer cancel()
	k.mu.Lock()
	c := k.conns[addr]
	delete(k.conns, addr)
	k.mu.Unlock()
	for fresh := c == nil; ; fresh = true {
		if fresh {
			var d net.Dialer
			nc, err := d.DialContext(ctx, "tcp", addr)
			if err != nil {
				return false
			}
			c = &probeConn{Conn: nc, r: bufio.NewReaderSize(nc, 256)}
		}
		if askVersion(ctx, c) {
			// A deadline left on a kept connection is a runtime timer that
			// fires ProbeTimeout after every probe with nothing to do: an
			// idle leader's wake-up twice a second.
			_ = c.SetDeadline(time.Time{})
			k.mu.Lock()
			k.conns[addr] = c
			k.mu.Unlock()
			return true
		}
		_ = c.Close()
		if fresh || ctx.Err() != nil {
			return false
		}
	}
}

func askVersion(ctx context.Context, c *probeConn) bool {
	return answersVersion(exchange(ctx, c, c.r, versionReq))
}

// close closes every kept connection. The round's goroutine calls it
// when the leadership ends.
func (k *keptProbes) close() {
	k.mu.Lock()
	defer k.mu.Unlock()
	for a, c := range k.conns {
		_ = c.Close()
		delete(k.conns, a)
	}
}
