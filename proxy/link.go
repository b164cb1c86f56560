package proxy

import (
	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
	"github.com/strata-cache/strata/tiers/memcached"
)

// A region link is a second listener of the same server (WithLink): its
// connections are registered with the same gnet engine, so they are served
// by the same event loops, tiers and pools as client connections, and
// speak the same protocol. What differs is that every request parsed on
// them is marked (tiers.Request.Link), with the location epoch or source
// marker of its meta opaque token (linkproto), so the locality tier serves
// it locally or refuses it, and never forwards it again.
//
// Deviation: mutual TLS on the link is not implemented. gnet cannot run
// TLS on its descriptors; a TLS link would terminate TLS in a goroutine
// pair per connection and hand gnet a loopback end. Until then, bind the
// link to an address only peer regions reach (a private network or a
// tunnel).

// linkMark is the gnet context of a connection accepted on the link
// listener until OnOpen replaces it with the connection's state.
type linkMark struct{}

// WithLink makes the server accept region-link connections on addr
// (host:port; port 0 picks a free one, see LinkAddr) in addition to its
// client listener. Default: no link listener.
func WithLink(addr string) Option {
	return func(o *options) { o.link = addr }
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
		r.Link, r.LinkSource, r.LinkEpoch = true, tok.Source, tok.Epoch
	}
}

// LoopUser is something that keeps connections on the server's event
// loops besides the memcached pools: the locality tier's region-link
// client. Start lends it the loops once the engine booted, before the
// first client is accepted; FlushLoop is called at the end of every round
// of a loop, like a pool's (memcached.Loops states the contract).
type LoopUser interface {
	Start(l memcached.Loops)
	FlushLoop(loop int)
}

// WithLoopUsers lends the server's loops to us, as WithPools does to
// pools. The tier then may answer after Do returns, so requests are
// ordered by its Phase.
func WithLoopUsers(us ...LoopUser) Option {
	return func(o *options) {
		o.users = append(o.users, us...)
		o.onStart = append(o.onStart, func(s *Server) {
			l := &poolLoops{s: s}
			for _, u := range us {
				u.Start(l)
			}
		})
	}
}
