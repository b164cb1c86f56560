package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/tiers/memcached"
)

// WithPools lends the server's event loops to memcached pools, so that
// each pool keeps its backend connections on the loops of the client
// connections they serve. The pools are started once the engine has
// booted, and the server flushes them once per round of each loop (that
// write is what sends their batched requests). Every pool the server's
// tier reaches (directly, or as L1 or L2 of a layered tier) must be given
// here: a pool left out is never started and fails every request.
func WithPools(pools ...*memcached.Pool) Option {
	return func(o *options) {
		o.pools = append(o.pools, pools...)
		o.onStart = append(o.onStart, func(s *Server) {
			l := &poolLoops{s: s}
			for _, p := range pools {
				p.Start(l)
			}
		})
	}
}

// poolLoops implements memcached.Loops over the server's gnet loops.
type poolLoops struct{ s *Server }

var _ memcached.Loops = (*poolLoops)(nil)

// NumLoops is the configured number of loops; a loop gets its index when
// its first client connection opens, so indexes stay below it.
func (pl *poolLoops) NumLoops() int { return pl.s.cfg.Loops }

// loop returns the state of loop i, or nil before its first client
// connection.
func (pl *poolLoops) loop(i int) *loopState {
	pl.s.mu.Lock()
	defer pl.s.mu.Unlock()
	if i < 0 || i >= len(pl.s.loops) {
		return nil
	}
	return pl.s.loops[i]
}

// Attach enrols nc on loop i with gnet's EventLoop.Enroll, which takes a
// duplicate of the socket and closes nc. It waits for gnet's answer, which
// comes after OnOpen ran on the loop, or for ctx.
func (pl *poolLoops) Attach(ctx context.Context, i int, nc net.Conn, h memcached.Handler) error {
	l := pl.loop(i)
	if l == nil {
		_ = nc.Close()
		return fmt.Errorf("proxy: event loop %d serves no connection yet", i)
	}
	b := &backendConn{srv: pl.s, loop: l, h: h}
	ch, err := l.el.Enroll(gnet.NewContext(context.Background(), b), nc)
	if err != nil {
		_ = nc.Close()
		return fmt.Errorf("proxy: enrol backend connection on loop %d: %w", i, err)
	}
	select {
	case res, ok := <-ch:
		if !ok {
			return errors.New("proxy: backend enrolment ended without a result")
		}
		if res.Err != nil {
			return fmt.Errorf("proxy: enrol backend connection on loop %d: %w", i, res.Err)
		}
		return nil
	case <-ctx.Done():
		// The enrolment may still finish; the handler then closes the
		// connection it no longer wants.
		return ctx.Err()
	}
}

// Run runs fn on loop i, then ends the callback as every callback ends
// (afterCallback). It drops fn when the loop has no state yet or the
// engine is stopping, as memcached.Loops allows.
func (pl *poolLoops) Run(i int, fn func()) { pl.s.RunOnLoop(i, fn) }

// backendConn is the gnet context of a connection a pool enrolled: it
// implements backendEvents and forwards to the pool's handler, on the
// loop the connection lives on.
type backendConn struct {
	srv  *Server
	loop *loopState
	h    memcached.Handler
}

var _ backendEvents = (*backendConn)(nil)

func (b *backendConn) owner() *loopState { return b.loop }

func (b *backendConn) onOpen(c gnet.Conn) {
	b.h.OnOpen(c)
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
func (b *backendConn) onTraffic(c gnet.Conn) { b.h.OnTraffic(c) }

// onClose fails what waited on the connection, then sends the client
// replies that completed and the requests that the failures re-issued.
func (b *backendConn) onClose(c gnet.Conn, err error) {
	b.loop.begin(b.srv)
	b.h.OnClose(c, err)
	b.srv.afterCallback(b.loop)
}
