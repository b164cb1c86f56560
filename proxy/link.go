package proxy

import (
	"crypto/tls"
	"time"

	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
)

// A region link is a second listener of the same server (WithLink): its
// connections are registered with the same gnet engine, so they are served
// by the same event loops, tiers and pools as client connections, and
// speak the same protocol. What differs is that every request parsed on
// them is marked (tiers.Request.Link), with the location epoch or source
// marker of its meta opaque token (linkproto), so the locality tier serves
// it locally or refuses it, and never forwards it again.
//
// Mutual TLS (WithLinkTLS): each link connection is handshaken on a
// goroutine of its own (bounded by tlsHandshakeTimeout) and its records
// are then processed on the event loop, as a TLS client's are (tls.go).

// Stalls. A link connection's bytes are held through a stall of this
// process like a client's (stall.go): a forwarded write that arrived
// while this strata was stopped is refused, never run late. A stall of the
// sending peer needs no rule here: the peer refuses or holds everything
// that could leave it late (tiers/locality's doc gives the argument and
// the cases outside it).

// linkMark is the gnet context of a connection accepted on the link
// listener until OnOpen replaces it with the connection's state.
type linkMark struct{}

// WithLink makes the server accept region-link connections on addr
// (host:port; port 0 picks a free one, see LinkAddr) in addition to its
// client listener. Default: no link listener.
func WithLink(addr string) Option {
	return func(o *options) { o.link = addr }
}

// WithLinkTLS requires mutual TLS on the link listener: cfg must hold the
// server's certificate and should require and verify client certificates
// (ClientAuth: tls.RequireAndVerifyClientCert with ClientCAs). Default: a
// plain link.
func WithLinkTLS(cfg *tls.Config) Option {
	return func(o *options) { o.linkTLS = cfg }
}

// tlsHandshakeTimeout bounds a link connection's handshake.
const tlsHandshakeTimeout = 10 * time.Second

// LinkAddr is the bound address of the region-link listener once started,
// the configured one before, "" without WithLink.
func (s *Server) LinkAddr() string {
	s.mu.Lock()
	a := s.lacc
	s.mu.Unlock()
	if a == nil {
		return s.opts.link
	}
	return a.ln.Addr().String()
}

// markLink marks every request of a command parsed on a link connection.
// The token is per command (one opaque per meta command); a text command
// has none and is a link request of epoch 0.
func markLink(cmd *protocol.Command) {
	tok, _ := linkproto.Parse(cmd.Opaque())
	for i := range cmd.Reqs {
		r := &cmd.Reqs[i]
		r.Link, r.LinkSource, r.LinkEpoch, r.LinkDeadline = true, tok.Source, tok.Epoch, tok.Deadline
	}
}
