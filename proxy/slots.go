package proxy

import (
	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
)

// Memory per connection. A request needs a slot (its parsed command, its
// tier operations and their results, about 1.3 KiB once used), a parser
// (144 bytes), reply and queue buffers and, under a layered tier, the connection's ordering counts
// (768 bytes); a connection needs them only while it has requests in
// flight or a request partly received. They are kept per
// event loop rather than per connection, so ten thousand idle client
// connections cost what their gnet and conn structures cost, not what
// their busiest moment needed. The loop's goroutine is the only one that
// takes or gives back, so the pools need no lock; they are bounded, and
// past the bound a returned item is left to the collector.

// Bounds of the loop's pools: enough for every request in flight on a
// busy loop to come back without allocating, small enough that a burst
// does not pin memory (a slot's arena can hold a large value's bytes).
const (
	maxLoopSlots   = 4096
	maxLoopCounts  = 1024
	maxLoopParsers = 1024
	// Reply and queue buffers: a queue's holds at most MaxInflight
	// pointers (8 KiB by default), a reply buffer up to maxPooledOut, so
	// the loop keeps at most 6 MiB of them.
	maxLoopBufs  = 256
	maxPooledOut = 16 << 10
)

// phaseCounts counts a connection's operations in flight by phase and key
// bucket (dispatch.go).
type phaseCounts [numPhases][phaseBuckets]uint32

// newSlot takes a slot from the loop's pool, or makes one.
func (cn *conn) newSlot() *slot {
	if s, ok := pop(&cn.loop.slots); ok {
		s.cn = cn
		return s
	}
	s := &slot{cn: cn}
	s.onDone = s.opDone
	return s
}

// recycle gives a slot whose operations have all completed (or were never
// issued) back to the loop. Nothing may refer to s afterwards.
func (cn *conn) recycle(s *slot) {
	cn.keys -= len(s.ops)
	s.cmd.Reset()
	s.fixed = s.fixed[:0]
	s.pending = 0
	s.refuse = false
	for i := range s.ops {
		s.ops[i].Req = tiers.Request{}
		s.ops[i].Ctx = nil
	}
	s.ops = s.ops[:0]
	s.cn = nil
	push(&cn.loop.slots, s, maxLoopSlots)
}

// takeCounts lends a zeroed phaseCounts to a connection about to issue an
// ordered operation.
func (l *loopState) takeCounts() *phaseCounts {
	if c, ok := pop(&l.counts); ok {
		return c
	}
	return new(phaseCounts)
}

// releaseCounts gives the connection's counts back once nothing ordered is
// in flight. Invariant: every count is zero when every inPhase is, so the
// loop's pool holds only zeroed counts.
func (cn *conn) releaseCounts() {
	if cn.inflight == nil {
		return
	}
	for _, n := range cn.inPhase {
		if n != 0 {
			return
		}
	}
	push(&cn.loop.counts, cn.inflight, maxLoopCounts)
	cn.inflight = nil
}

// unpark gives a connection that parked (or never had them) what it needs
// to go on with requests: a parser, resumed in cn's Mode, and its reply
// and queue buffers when the loop has some spare.
func (cn *conn) unpark() {
	l := cn.loop
	p, ok := pop(&l.parsers)
	if !ok {
		p = protocol.NewParserShared(protocol.Limits{}, &l.parse)
	}
	p.Resume(cn.limits(), cn.mode)
	cn.parser = p
	if cn.out == nil {
		cn.out, _ = pop(&l.outs)
	}
	if cn.qbuf == nil {
		cn.qbuf, _ = pop(&l.queues)
		cn.queue = cn.qbuf[:0]
	}
}

// park gives the loop what the connection needs only while it has
// requests (its parser, keeping the Mode, and the backing arrays of its
// replies and reply queue) once it is between requests: every request it
// parsed was answered (a Command refers to its parser until then), every
// reply handed to gnet, and the parser holds nothing of a request begun.
// Without it an idle connection would keep the buffers its busiest
// moment grew (up to 256 KiB of replies, 8 KiB of queue).
func (cn *conn) park() {
	if cn.parser == nil || len(cn.queue) > 0 || cn.held != nil || len(cn.out) > 0 {
		return
	}
	m, ok := cn.parser.Park()
	if !ok {
		return
	}
	l := cn.loop
	cn.mode = m
	push(&l.parsers, cn.parser, maxLoopParsers)
	cn.parser = nil
	if c := cap(cn.out); c > 0 && c <= maxPooledOut {
		push(&l.outs, cn.out[:0], maxLoopBufs)
	}
	cn.out = nil
	if cap(cn.qbuf) > 0 {
		push(&l.queues, cn.qbuf[:0], maxLoopBufs)
	}
	cn.qbuf, cn.queue = nil, nil
}

// pop takes the last item of the pool *s, if any.
func pop[T any](s *[]T) (T, bool) {
	var zero T
	n := len(*s)
	if n == 0 {
		return zero, false
	}
	v := (*s)[n-1]
	(*s)[n-1] = zero
	*s = (*s)[:n-1]
	return v, true
}

// push gives v to the pool *s unless it already holds limit items.
func push[T any](s *[]T, v T, limit int) {
	if len(*s) < limit {
		*s = append(*s, v)
	}
}

// limits are the protocol limits of the connection's requests.
func (cn *conn) limits() protocol.Limits {
	lim := cn.srv.cfg.Limits
	if cn.link {
		lim.Auth = nil // a region link authenticated with its mTLS
	}
	return lim
}
