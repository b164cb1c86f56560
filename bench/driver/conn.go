package driver

import (
	"bufio"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// conn is one TCP connection to the target with its read buffer. It is
// owned by one worker (in open loop, the sender writes and the receiver
// reads; neither touches the other's half).
type conn struct {
	nc        net.Conn
	br        *bufio.Reader
	ioTimeout time.Duration
	// deadlineSet is when the connection's deadline was last pushed forward
	// (unix nanoseconds). Pushing it once a second instead of per batch
	// saves a syscall-free but not free timer update on the hot path; the
	// effective timeout is then between IOTimeout-1s and IOTimeout.
	deadlineSet atomic.Int64
}

func dial(cfg *Config) (*conn, error) {
	nc, err := net.DialTimeout("tcp", cfg.Target, cfg.DialTimeout)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", cfg.Target, err)
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if cfg.TLS != nil {
		// Records end after each value, as memcached -Z needs (tlsconn).
		tc, err := tlsconn.DialBlocking(nc, cfg.TLS, cfg.DialTimeout)
		if err != nil {
			return nil, fmt.Errorf("TLS handshake with %s: %w", cfg.Target, err)
		}
		nc = tc
	}
	c := &conn{nc: nc, br: bufio.NewReaderSize(nc, 64<<10), ioTimeout: cfg.IOTimeout}
	c.refreshDeadline(time.Now())
	return c, nil
}

// refreshDeadline pushes the I/O deadline forward if it was last set more
// than a second ago.
func (c *conn) refreshDeadline(now time.Time) {
	last := c.deadlineSet.Load()
	if now.UnixNano()-last < int64(time.Second) {
		return
	}
	if c.deadlineSet.CompareAndSwap(last, now.UnixNano()) {
		_ = c.nc.SetDeadline(now.Add(c.ioTimeout))
	}
}

// setReadDeadline sets a firm read deadline (used when draining).
func (c *conn) setReadDeadline(t time.Time) {
	c.deadlineSet.Store(t.UnixNano() + int64(time.Hour)) // stop refreshes
	_ = c.nc.SetReadDeadline(t)
}

func (c *conn) close() { _ = c.nc.Close() }

// budget hands out a shared request count. A zero limit is unlimited.
type budget struct {
	limit int64
	taken atomic.Int64
}

// claim takes up to n requests from the budget and returns how many it got.
func (b *budget) claim(n int) int {
	if b.limit == 0 {
		return n
	}
	for {
		t := b.taken.Load()
		left := b.limit - t
		if left <= 0 {
			return 0
		}
		k := min(int64(n), left)
		if b.taken.CompareAndSwap(t, t+k) {
			return int(k)
		}
	}
}
