package proxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"

	"github.com/strata-cache/strata/internal/tlsconn"
	"github.com/strata-cache/strata/tiers/hotkeys"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/memcached"
)

// Loops is the handle on a server's event loops. It is made before the
// tiers, which take it in their constructors, and bound to the one server
// New builds with it; gnet's loops exist only once that server's engine
// boots, so until then Run drops its function and Attach fails, which
// nothing that joined can notice: users are started after the boot.
//
// Users (memcached.User: the pools, the region-link client) join the
// handle when they are built (memcached.New, link.New call Join), so the
// server starts and flushes exactly the users built on its loops and none
// can be left out. Joining closes when New binds the handle: the server
// decides then, once, whether any tier may answer after Do returns.
//
// Every method is safe from any goroutine.
type Loops struct {
	n   int
	srv atomic.Pointer[Server] // set once by New (bind)

	mu    sync.Mutex // guards users and bound
	users []memcached.User
	bound bool
}

// The tiers declare what they need of the loops; the handle is all of it.
var (
	_ memcached.Loops   = (*Loops)(nil)
	_ layered.Executor  = (*Loops)(nil)
	_ hotkeys.Executor  = (*Loops)(nil)
	_ locality.Executor = (*Loops)(nil)
)

// NewLoops makes the handle on n event loops; n is Config.Loops, with its
// default (0: one per CPU) and bounds.
func NewLoops(n int) (*Loops, error) {
	n, err := loopCount(n)
	if err != nil {
		return nil, err
	}
	return &Loops{n: n}, nil
}

// loopCount applies Config.Loops' default and bounds.
func loopCount(n int) (int, error) {
	if n < 0 || n > MaxLoops {
		return 0, fieldErr("Loops", "%d is out of range: 0 (one per CPU) to %d", n, MaxLoops)
	}
	if n == 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return n, nil
}

// NumLoops is the number of loops; a loop gets its index when its first
// client connection opens, so indexes stay below it.
func (l *Loops) NumLoops() int { return l.n }

// Join makes u a user of the loops (memcached.Loops.Join): the server
// bound to them starts u once its engine booted, before the first client
// is accepted, and flushes u at the end of every round of each loop. It
// fails once a server holds the handle.
func (l *Loops) Join(u memcached.User) error {
	if u == nil {
		return errors.New("proxy: a nil loop user")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bound {
		return errors.New("proxy: the event loops already serve a server; build what uses them before the server")
	}
	l.users = append(l.users, u)
	return nil
}

// bind gives the handle to s and returns the users that joined, which no
// longer change. A handle serves one server.
func (l *Loops) bind(s *Server) ([]memcached.User, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.bound {
		return nil, errors.New("proxy: the event loops already serve another server")
	}
	l.bound = true
	l.srv.Store(s)
	return l.users, nil
}

// loop returns the state of loop i, or nil before its first client
// connection (or before a server holds the handle).
func (l *Loops) loop(i int) (*Server, *loopState) {
	s := l.srv.Load()
	if s == nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if i < 0 || i >= len(s.loops) {
		return s, nil
	}
	return s, s.loops[i]
}

// Attach enrols nc on loop i with gnet's EventLoop.Enroll, which takes a
// duplicate of the socket and closes nc. It waits for gnet's answer, which
// comes after OnOpen ran on the loop, or for ctx.
func (l *Loops) Attach(ctx context.Context, i int, nc net.Conn, h memcached.Handler) error {
	s, ls := l.loop(i)
	if ls == nil {
		_ = nc.Close()
		return fmt.Errorf("proxy: event loop %d serves no connection yet", i)
	}
	b := &backendConn{srv: s, loop: ls, h: h}
	if hd, ok := nc.(*tlsconn.Handoff); ok {
		nc, b.session = hd.Conn, hd.Session // enrol the socket; records go through the session
	}
	ch, err := enrolls.enrol(func() (<-chan gnet.RegisteredResult, error) {
		return ls.el.Enroll(gnet.NewContext(context.Background(), b), nc)
	})
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

// Run runs fn on loop i, as Server.RunOnLoop does: later and
// asynchronously, then ends the callback as every callback ends. It drops
// fn before a server holds the handle, when the loop has no state yet or
// when the engine is stopping, as memcached.Loops allows: nothing issued
// on that loop can be waiting then.
func (l *Loops) Run(i int, fn func()) {
	if s := l.srv.Load(); s != nil {
		s.RunOnLoop(i, fn)
	}
}
