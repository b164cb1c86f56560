package memcached

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/strata-cache/strata/internal/tlsconn"
)

// TLS to the servers (Config.TLS, memcached started with -Z): every
// connection the pool opens handshakes on the goroutine that dialled it,
// within DialTimeout. A connection for the event loop is then handed to
// Loops.Attach as a tlsconn.Handoff, whose records the loop processes; a
// probe's or a stats poll's stays a blocking tls.Conn. The files are read
// when the pool is built and again by ReloadTLS; connections open keep
// the session they negotiated.

// ReloadTLS reads Config.TLS's files again for the connections opened
// from now on. On error the material in force stays. Without TLS it does
// nothing.
func (p *Pool) ReloadTLS() error {
	if !p.cfg.TLS.On {
		return nil
	}
	c, err := p.cfg.TLS.Load()
	if err != nil {
		return err
	}
	p.tls.Store(c)
	return nil
}

// TLSHandshakes reads the counts of the handshakes the pool ran with its
// servers (probes and stats polls included); ok is false without TLS.
func (p *Pool) TLSHandshakes() (t tlsconn.Tally, ok bool) {
	if !p.cfg.TLS.On {
		return t, false
	}
	return p.handshakes.Read(), true
}

// dialServer connects to addr for a blocking exchange (a probe, a stats
// poll): a handshaken tls.Conn when the pool has TLS.
func (p *Pool) dialServer(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	cfg := p.tls.Load()
	if err != nil || cfg == nil {
		return nc, err
	}
	tc := tls.Client(nc, tlsconn.ForAddr(cfg, addr))
	err = tc.HandshakeContext(ctx)
	p.handshakes.Count(err, false)
	if err != nil {
		_ = nc.Close()
		return nil, err
	}
	return tc, nil
}

// dialLoop connects to addr for an event loop: the socket, or with TLS a
// Handoff of the socket and its handshaken session.
func (p *Pool) dialLoop(ctx context.Context, addr string) (net.Conn, error) {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	cfg := p.tls.Load()
	if err != nil || cfg == nil {
		return nc, err
	}
	timeout := p.cfg.DialTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	s, err := tlsconn.Client(nc, tlsconn.ForAddr(cfg, addr), timeout)
	p.handshakes.Count(err, false)
	if err != nil {
		return nil, err
	}
	return &tlsconn.Handoff{Conn: nc, Session: s}, nil
}
