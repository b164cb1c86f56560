package proxy

import (
	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/tiers/memcached"
)

// A pool with TLS (memcached.Config.TLS) handshakes on its dialling
// goroutine and hands Attach a tlsconn.Handoff: the socket is enrolled
// like any backend connection, and the pool's handler reads and writes
// through tlsBackend, the session's plaintext, on the loop.

// tlsBackend is a TLS backend connection as the pool sees it.
type tlsBackend struct{ tlsIO }

var _ memcached.Conn = (*tlsBackend)(nil)

func (b *tlsBackend) Peek(n int) ([]byte, error) { return b.t.Peek(n), nil }
func (b *tlsBackend) Discard(n int) (int, error) { return b.t.Discard(n), nil }

// Write seals a batch of the pool's requests, ending a record after each
// storage request's data (tlsconn.StorageEnd says why).
func (b *tlsBackend) Write(p []byte) (int, error) {
	for rest := p; len(rest) > 0; {
		n := tlsconn.StorageEnd(rest)
		if err := b.t.Encrypt(rest[:n]); err != nil {
			_ = b.raw.Close()
			return 0, err
		}
		rest = rest[n:]
	}
	return len(p), b.send()
}

func (b *tlsBackend) Close() error { return b.raw.Close() }

// conn is what the pool's handler is given for c: c itself, or its TLS
// wrapper, made on first sight (OnOpen) and the same one after.
func (b *backendConn) conn(c gnet.Conn) memcached.Conn {
	if b.session == nil {
		return c
	}
	if b.tls == nil {
		b.tls = &tlsBackend{tlsIO{raw: c, t: b.session, limit: b.srv.peekMax, fresh: true}}
	}
	return b.tls
}

// tlsTraffic is onTraffic of a TLS backend connection.
func (b *backendConn) tlsTraffic(c gnet.Conn) {
	w := b.conn(c).(*tlsBackend)
	w.pump()
	b.h.OnTraffic(w)
	switch {
	case w.t.Err() != nil:
		_ = c.Close() // the server's close_notify or a broken record
	case w.more():
		_ = c.Wake(nil)
	}
}
