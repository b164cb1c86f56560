package proxy

import (
	"context"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/tiers/memcached"
)

// backendConn is the gnet context of a connection a pool enrolled: it
// implements backendEvents and forwards to the pool's handler, on the
// loop the connection lives on.
type backendConn struct {
	srv  *Server
	loop *loopState
	h    memcached.Handler
	// session is the TLS session of a connection the pool handshook
	// (tls_backend.go), nil for plaintext; tls wraps it once open.
	session *tlsconn.Conn
	tls     *tlsBackend
}

var _ backendEvents = (*backendConn)(nil)

func (b *backendConn) owner() *loopState { return b.loop }

func (b *backendConn) onOpen(c gnet.Conn) {
	b.h.OnOpen(b.conn(c))
	// Requests queued while dialling are written by a callback of their
	// own right after this one, not from inside gnet's OnOpen, where a
	// failed write would close the connection gnet is still opening.
	s, l := b.srv, b.loop
	_ = l.el.Execute(context.Background(), gnet.RunnableFunc(func(context.Context) error {
		s.afterCallback(l)
		return nil
	}))
}

// onTraffic parses replies; the server's OnTraffic ends the callback with
// afterCallback.
func (b *backendConn) onTraffic(c gnet.Conn) {
	if b.session != nil {
		b.tlsTraffic(c)
		return
	}
	b.h.OnTraffic(c)
}

// onClose fails what waited on the connection, then sends the client
// replies that completed and the requests that the failures re-issued.
func (b *backendConn) onClose(c gnet.Conn, err error) {
	b.loop.begin(b.srv)
	b.h.OnClose(b.conn(c), err)
	b.srv.afterCallback(b.loop)
}
