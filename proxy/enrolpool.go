package proxy

import (
	"sync"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/panjf2000/gnet/v2/pkg/pool/goroutine"
)

// gnet runs each Engine.Register and EventLoop.Enroll (enroll in its
// eventloop_unix.go) as a task on its process-wide goroutine pool,
// goroutine.DefaultWorkerPool, and on Linux uses that pool for nothing
// else. An open pool wakes the process twice a second (ants' clock
// goroutine) and every ten seconds (its purge), with or without work, so
// an idle proxy would pay for the pool all its life. The server accepts
// clients through Register and the pools and link enrol backend
// connections through Enroll (listen.go, loops.go); every such call goes
// through enrolls, which keeps the pool open only around them.
//
// The pool is replaced, never rebooted: ants' Reboot after Release races
// with workers of the released pool still exiting (they read the fields
// Reboot rewrites), so a busy period gets a fresh pool from gnet's own
// goroutine.Default and the released one is left to its exiting workers.
// Release lets a running task finish (its worker exits afterwards), so
// the pool may close as soon as the last Submit has returned: an
// enrolment under way completes on the released pool.
var enrolls = newEnrolGuard(enrolLinger)

// enrolLinger is how long the pool stays open after the last enrolment:
// a burst of connections (a client opening its pool, a restart's
// reconnections) shares one pool instead of paying about 5 µs and 28
// allocations for a fresh one per connection, and an idle proxy pays for
// the pool's clock only this long after its last connection.
const enrolLinger = time.Second

// enrolGuard counts the Register and Enroll calls in flight and releases
// gnet's pool once none has been for linger. Every method is safe from any
// goroutine.
type enrolGuard struct {
	linger time.Duration

	// mu guards inFlight and timer, and orders every write of
	// goroutine.DefaultWorkerPool before gnet's read of it inside the
	// call that follows (gnet reads it nowhere else on Linux).
	mu       sync.Mutex
	inFlight int         // calls between begin and end
	timer    *time.Timer // releases the pool; armed when inFlight drops to 0
}

func newEnrolGuard(linger time.Duration) *enrolGuard {
	return &enrolGuard{linger: linger}
}

// enrol makes call (a Register or an Enroll) with gnet's pool open, and
// returns what call returned. The result channel is the caller's alone:
// the guard does not read it.
func (g *enrolGuard) enrol(call func() (<-chan gnet.RegisteredResult, error)) (<-chan gnet.RegisteredResult, error) {
	g.begin()
	defer g.end()
	return call()
}

func (g *enrolGuard) begin() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight++
	if g.timer != nil {
		g.timer.Stop()
	}
	if goroutine.DefaultWorkerPool.IsClosed() {
		goroutine.DefaultWorkerPool = goroutine.Default()
	}
}

func (g *enrolGuard) end() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.inFlight--
	if g.inFlight > 0 {
		return
	}
	if g.timer == nil {
		g.timer = time.AfterFunc(g.linger, g.release)
	} else {
		g.timer.Reset(g.linger)
	}
}

// release closes gnet's pool unless a call is in flight. A timer that
// fired just as a call began may release a little before linger has
// passed since the last call ended; that costs the next call a fresh pool,
// nothing more.
func (g *enrolGuard) release() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.inFlight == 0 {
		goroutine.DefaultWorkerPool.Release() // a no-op on a closed pool
	}
}
