package proxy

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/panjf2000/gnet/v2"

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
// Mutual TLS (WithLinkTLS): gnet cannot run TLS on its descriptors, so
// each link connection is handshaken on a goroutine of its own (bounded by
// tlsHandshakeTimeout) and then bridged (internal/tlsbridge): two
// goroutines decrypt into and encrypt out of one end of a Unix socket
// pair, and the other end is registered with the engine like any client.
// Stop closes the TLS connections and waits for those goroutines. The
// bridge costs two more copies and system calls per request; a link
// without TLS has none of it.

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

// acceptTLS handshakes nc on a goroutine the server owns and registers
// the bridged connection; a failed handshake closes nc.
func (s *Server) acceptTLS(a *acceptor, eng gnet.Engine, nc net.Conn) {
	s.handshakes.Add(1)
	go func() {
		defer s.handshakes.Done()
		tc := tls.Server(nc, a.tls)
		ctx, cancel := context.WithTimeout(context.Background(), tlsHandshakeTimeout)
		err := tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			s.cfg.Logger.Debug("link: TLS handshake", "remote", nc.RemoteAddr().String(), "err", err)
			_ = tc.Close()
			return
		}
		pc, err := s.tlsLinks.Wrap(tc)
		if err != nil {
			return
		}
		if err := s.register(eng, pc, true); err != nil {
			s.cfg.Logger.Debug("link: register", "err", err)
		}
	}()
}

// stopTLS waits for the handshakes under way and closes the bridged
// connections, within ctx.
func (s *Server) stopTLS(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.handshakes.Wait()
		s.tlsLinks.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

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
