package proxy

import (
	"github.com/strata-cache/strata/proxy/protocol"
	"github.com/strata-cache/strata/tiers"
)

// Memory per connection. A request needs a slot (its parsed command, its
// tier operations and their results, about 1.3 KiB once used) and its
// connection's work: a parser (144 bytes), reply and queue buffers, and
// under a layered tier ordering counts (768 bytes). A connection needs
// them only while it has requests in flight or a request partly
// received. They are kept per event loop rather than per connection, so
// ten thousand idle client connections cost what their gnet and conn
// structures cost, not what their busiest moment needed. The loop's
// goroutine is the only one that takes or gives back, so the pools need
// no lock; they are bounded, and past the bound a returned item is left
// to the collector.

// Bounds of the loop's pools: enough for every request in flight on a
// busy loop to come back without allocating, small enough that a burst
// does not pin memory (a slot's arena can hold a large value's bytes).
const (
	maxLoopSlots  = 4096
	maxLoopCounts = 1024
	maxLoopWorks  = 1024
	// Reply and queue buffers: a queue's holds at most MaxInflight
	// pointers (8 KiB by default), a reply buffer up to maxPooledOut; the
	// first maxLoopBufs spare works keep theirs, so the loop keeps at
	// most 6 MiB of them.
	maxLoopBufs  = 256
	maxPooledOut = 16 << 10
)

// phaseCounts counts a connection's operations in flight by phase and key
// bucket (dispatch.go).
type phaseCounts [numPhases][phaseBuckets]uint32

// work is the part of a connection it needs only while it has requests in
// flight or a request partly received. Loops keep the spare ones, with
// their parser and buffers, for the next connection that has work.
type work struct {
	parser *protocol.Parser // resumed in the connection's Mode
	queue  []*slot          // pending replies in request order; queue[0] is the head
	qbuf   []*slot          // the backing array queue is reset to when it empties
	out    []byte           // replies formatted but not yet written
	// keys counts the tier operations of the slots in queue (a multi-get
	// has one per key): MaxInflight bounds them too, so a long multi-get,
	// which the parser hands out in pieces, has at most MaxInflight keys
	// in flight, like any other client's pipeline.
	keys int

	// Ordering of tier operations within the connection (see
	// dispatch.go): inflight counts operations issued and not yet done by
	// phase and key bucket, inPhase by phase; held is a parsed request
	// that must wait for operations of the other phase on one of its
	// keys. inflight is borrowed from the loop while inPhase has a
	// non-zero count and nil otherwise.
	inPhase  [numPhases]int32
	inflight *phaseCounts
	held     *slot
}

// parked is the work of every connection between requests: no parser,
// nothing queued, held or unwritten, so code that only asks how much is in
// flight reads a parked connection as it reads an idle busy one. Nothing
// writes to it: a connection unparks before its first request is parsed,
// and every loop shares it, so a write would be a race the race detector
// reports.
var parked work

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

// unpark gives a connection that parked (or never had one) a work from the
// loop, its parser resumed in cn's Mode.
func (cn *conn) unpark() {
	l := cn.loop
	w, ok := pop(&l.works)
	if !ok {
		w = &work{parser: protocol.NewParserShared(protocol.Limits{}, &l.parse)}
	}
	w.parser.Resume(cn.limits(), cn.mode)
	cn.work = w
}

// park gives the loop the connection's work once it is between requests:
// every request it parsed was answered (a Command refers to its parser
// until then), every reply handed to gnet, and the parser holds nothing
// of a request begun. Without it an idle connection would keep the
// buffers its busiest moment grew (up to 256 KiB of replies, 8 KiB of
// queue).
func (cn *conn) park() {
	w := cn.work
	if w == &parked || len(w.queue) > 0 || w.held != nil || len(w.out) > 0 {
		return
	}
	m, ok := w.parser.Park()
	if !ok {
		return
	}
	cn.mode = m
	cn.work = &parked
	l := cn.loop
	if cap(w.out) > maxPooledOut {
		w.out = nil
	}
	if len(l.works) >= maxLoopBufs {
		w.out, w.qbuf = nil, nil
	}
	w.out, w.queue = w.out[:0], w.qbuf[:0]
	push(&l.works, w, maxLoopWorks)
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
