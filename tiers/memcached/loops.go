package memcached

import (
	"context"
	"net"
)

// Conn is a backend connection as the event loop lends it to the pool.
// Every method is called on the connection's own event loop only. gnet's
// Conn satisfies it.
type Conn interface {
	// Peek returns the unread inbound bytes (all of them for n <= 0). The
	// slice is valid until Discard or the end of the callback.
	Peek(n int) ([]byte, error)
	// Discard drops the first n inbound bytes. The pool never calls it
	// with n <= 0 (gnet then drops everything).
	Discard(n int) (int, error)
	// Write sends b or buffers what the socket does not take; it does not
	// keep b. On error the connection is closed (gnet calls OnClose before
	// Write returns).
	Write(b []byte) (int, error)
	// Close closes the connection; OnClose follows, possibly later.
	Close() error
}

// Handler receives a backend connection's events, on its event loop.
type Handler interface {
	OnOpen(c Conn)
	OnTraffic(c Conn)
	OnClose(c Conn, err error)
}

// Loops lends the pool the proxy's event loops. A pool takes it in New
// and joins it there (Join), so the one that serves the loops starts and
// flushes every pool built on them, and none can be left out.
//
// Contract: FlushLoop(loop) is called on the loop at the end of every
// round in which a callback ran on it — client traffic, a Handler event, a
// function passed to Run — after all of that round's callbacks, so that
// the requests of every callback of a poll iteration share one write per
// backend connection.
type Loops interface {
	// NumLoops is the number of event loops; Op.Loop is below it.
	NumLoops() int
	// Attach enrols nc, which the pool dialled, on event loop `loop`; its
	// events then go to h on that loop, OnOpen first. Attach owns nc from
	// the call on, error or not. It waits until the loop accepted the
	// connection or ctx ends; if ctx ends first, the connection may still
	// open later, and h must then close it.
	Attach(ctx context.Context, loop int, nc net.Conn, h Handler) error
	// Run runs fn on event loop `loop`, later and asynchronously. fn is
	// dropped when the loop has served no connection yet (then no pool
	// state lives on it) or has stopped.
	Run(loop int, fn func())
	// Join makes u a user of the loops: u.Start runs once they serve,
	// before their first client connection, and u.FlushLoop(loop) at the
	// end of every round of each loop from then on. It fails once the
	// loops are bound to a server, whose flushing is fixed by then.
	Join(u User) error
}

// User is what keeps connections on the loops and batches its writes to
// them: a pool, or the locality tier's region-link client. It joins the
// Loops it was built with. A user may also tell whether a round on a loop
// would do anything for it, with a method Batched(loop int) bool (Pool
// has one); the loops may then skip the rounds for which it is false.
type User interface {
	// Start is called once, when the loops begin to serve.
	Start()
	// FlushLoop writes what the user batched on loop during this round.
	FlushLoop(loop int)
}
