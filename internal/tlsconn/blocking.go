package tlsconn

import (
	"context"
	"crypto/tls"
	"net"
	"sync"
	"time"
)

// Blocking is a client TLS connection for a goroutine that blocks on it
// (a load generator): a tls.Conn whose Write ends a record after every
// storage request's data (StorageEnd says why memcached -Z needs it) and
// reaches the socket in one write. Read and Write may run on two
// goroutines, as on a tls.Conn.
type Blocking struct {
	*tls.Conn
	w *batching
}

// batching is the socket under a Blocking: while a Write is sealing, the
// records collect in buf and leave together.
type batching struct {
	net.Conn
	mu  sync.Mutex // guards on and buf, and orders the socket's writes
	on  bool
	buf []byte
}

// Write is crypto/tls's: records Blocking.Write seals, and any it sends
// by itself (alerts, key updates) from Read.
func (b *batching) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.on {
		b.buf = append(b.buf, p...)
		return len(p), nil
	}
	return b.Conn.Write(p)
}

// DialBlocking runs the client handshake on nc within timeout.
func DialBlocking(nc net.Conn, cfg *tls.Config, timeout time.Duration) (*Blocking, error) {
	w := &batching{Conn: nc}
	tc := tls.Client(w, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return &Blocking{Conn: tc, w: w}, nil
}

// Write seals p, a batch of requests, and sends it in one write. The
// lock is never held while crypto/tls runs, which takes locks of its own.
func (c *Blocking) Write(p []byte) (int, error) {
	c.w.mu.Lock()
	c.w.on = true
	c.w.mu.Unlock()
	var err error
	for rest := p; len(rest) > 0 && err == nil; {
		n := StorageEnd(rest)
		_, err = c.Conn.Write(rest[:n])
		rest = rest[n:]
	}
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	c.w.on = false
	if len(c.w.buf) > 0 {
		if _, werr := c.w.Conn.Write(c.w.buf); err == nil {
			err = werr
		}
		c.w.buf = c.w.buf[:0]
	}
	if err != nil {
		return 0, err
	}
	return len(p), nil
}
