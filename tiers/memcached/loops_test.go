package memcached

import (
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

// testLoops stands in for the proxy's gnet loops in this package's tests:
// the test goroutine is every event loop. Connection reads happen on one
// reader goroutine per connection, which hands each chunk to the loop and
// waits until the loop has consumed it, as an event loop would. Nothing
// on the steady path allocates, so benchmarks measure the pool.
type testLoops struct {
	n       int
	users   []User // joined by New; started by start
	maxRead int    // bytes per read; small values split replies anywhere

	mu     sync.Mutex // guards queue
	queue  []event
	notify chan struct{}

	conns []*testConn // loop-owned
}

type event struct {
	fn   func()
	tc   *testConn
	n    int
	err  error
	loop int
}

func newTestLoops(n int) *testLoops {
	return &testLoops{n: n, notify: make(chan struct{}, 1), maxRead: 64 << 10}
}

func (l *testLoops) post(e event) {
	l.mu.Lock()
	l.queue = append(l.queue, e)
	l.mu.Unlock()
	select {
	case l.notify <- struct{}{}:
	default:
	}
}

func (l *testLoops) NumLoops() int { return l.n }

func (l *testLoops) Attach(ctx context.Context, loop int, nc net.Conn, h Handler) error {
	if err := ctx.Err(); err != nil {
		nc.Close()
		return err
	}
	tc := &testConn{l: l, nc: nc, h: h, loop: loop, rbuf: make([]byte, l.maxRead), ack: make(chan struct{})}
	l.post(event{loop: loop, fn: func() {
		l.conns = append(l.conns, tc)
		h.OnOpen(tc)
		go tc.reader()
	}})
	return nil
}

func (l *testLoops) Run(loop int, fn func()) { l.post(event{loop: loop, fn: fn}) }

func (l *testLoops) Join(u User) error {
	l.users = append(l.users, u)
	return nil
}

// start starts every user that joined, as the proxy does once it serves.
func (l *testLoops) start() {
	for _, u := range l.users {
		u.Start()
	}
}

// runPending runs every queued event, each followed by FlushLoop when the
// user asks for the round (Batched), as the proxy does at the end of a
// callback: every test then also checks that a pool asks for every round
// it needs. It reports whether it ran any.
func (l *testLoops) runPending() bool {
	l.mu.Lock()
	q := l.queue
	l.queue = nil
	l.mu.Unlock()
	for i := range q {
		e := &q[i]
		switch {
		case e.fn != nil:
			e.fn()
		case e.tc != nil:
			e.tc.deliver(e.n, e.err)
		}
		for _, u := range l.users {
			if b, ok := u.(interface{ Batched(int) bool }); !ok || b.Batched(e.loop) {
				u.FlushLoop(e.loop)
			}
		}
	}
	// Hand the slice back for reuse when nothing was queued meanwhile.
	l.mu.Lock()
	if l.queue == nil {
		clear(q)
		l.queue = q[:0]
	}
	l.mu.Unlock()
	return len(q) > 0
}

// until drives the loops until cond holds, failing t at the deadline.
func (l *testLoops) until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	// cond may come to hold off the loops (a probe goroutine bringing a
	// server back), and the pool's ticker posts nothing while the loops
	// are quiet, so cond is also polled.
	tick := time.NewTicker(poll.Interval)
	defer tick.Stop()
	for {
		l.runPending()
		if cond() {
			return
		}
		select {
		case <-l.notify:
		case <-tick.C:
		case <-timer.C:
			t.Fatalf("timed out after %v waiting for %s", d, what)
		}
	}
}

// step waits for one batch of events and runs it.
func (l *testLoops) step() {
	if !l.runPending() {
		<-l.notify
		l.runPending()
	}
}

// testConn is a loop-side connection: Peek/Discard over the bytes the
// reader delivered, Write straight to the socket.
type testConn struct {
	l      *testLoops
	nc     net.Conn
	h      Handler
	loop   int
	in     []byte
	rbuf   []byte
	ack    chan struct{}
	closed bool
	writes int
}

func (c *testConn) reader() {
	for {
		n, err := c.nc.Read(c.rbuf)
		c.l.post(event{loop: c.loop, tc: c, n: n, err: err})
		if err != nil {
			return
		}
		<-c.ack
	}
}

// deliver runs on the loop with what the reader read.
func (c *testConn) deliver(n int, err error) {
	if n > 0 && !c.closed {
		c.in = append(c.in, c.rbuf[:n]...)
		c.h.OnTraffic(c)
	}
	if err != nil {
		if !c.closed {
			c.closed = true
			if errors.Is(err, net.ErrClosed) {
				err = nil
			} else if err == io.EOF {
				err = io.EOF
			}
			c.h.OnClose(c, err)
		}
		return
	}
	c.ack <- struct{}{}
}

func (c *testConn) Peek(n int) ([]byte, error) {
	if n <= 0 {
		return c.in, nil
	}
	if n > len(c.in) {
		return nil, io.ErrShortBuffer
	}
	return c.in[:n], nil
}

func (c *testConn) Discard(n int) (int, error) {
	if n <= 0 || n > len(c.in) {
		panic("Discard out of range") // the pool promises never to do this
	}
	m := copy(c.in, c.in[n:])
	c.in = c.in[:m]
	return n, nil
}

func (c *testConn) Write(b []byte) (int, error) {
	if c.closed {
		panic("write to a closed connection")
	}
	c.writes++
	total := len(b)
	for len(b) > 0 {
		k := min(len(b), c.l.maxRead) // small writes too, to split requests
		n, err := c.nc.Write(b[:k])
		if err != nil {
			c.closed = true
			_ = c.nc.Close()
			c.h.OnClose(c, err) // as gnet: OnClose before Write returns
			return 0, err
		}
		b = b[n:]
	}
	return total, nil
}

func (c *testConn) Close() error { return c.nc.Close() }
