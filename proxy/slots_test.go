package proxy

import (
	"testing"

	"github.com/strata-cache/strata/proxy/protocol"
)

// TestSlotsAreTheLoops: a slot given back by one connection is the next
// one another connection of the loop takes, pointing at its new owner, and
// the connection keeps nothing; past the bound the pool stops growing.
func TestSlotsAreTheLoops(t *testing.T) {
	l := &loopState{}
	a, b := &conn{loop: l}, &conn{loop: l}
	s := a.newSlot()
	if s.cn != a || s.onDone == nil {
		t.Fatalf("new slot: owner %p, onDone set %v; want %p, true", s.cn, s.onDone != nil, a)
	}
	a.recycle(s)
	if len(l.slots) != 1 || s.cn != nil {
		t.Fatalf("after recycle: %d pooled, owner %p; want 1, nil", len(l.slots), s.cn)
	}
	if got := b.newSlot(); got != s || got.cn != b {
		t.Fatalf("b took %p owned by %p; want the recycled %p owned by b", got, got.cn, s)
	}
	if len(l.slots) != 0 {
		t.Fatalf("%d slots pooled after the take, want 0", len(l.slots))
	}
	for range maxLoopSlots + 10 {
		a.recycle(&slot{cn: a})
	}
	if len(l.slots) != maxLoopSlots {
		t.Fatalf("%d slots pooled, want the bound %d", len(l.slots), maxLoopSlots)
	}
}

// TestCountsLentWhileOrdered: a connection holds ordering counts only
// while an ordered operation is in flight, and gives them back zeroed.
func TestCountsLentWhileOrdered(t *testing.T) {
	l := &loopState{}
	cn := &conn{loop: l}
	cn.releaseCounts() // nothing borrowed: nothing happens
	if len(l.counts) != 0 {
		t.Fatal("released counts that were never lent")
	}
	cn.inflight = l.takeCounts()
	cn.inflight[0][3]++
	cn.inPhase[0]++
	cn.inflight[2][5]++
	cn.inPhase[2]++
	lent := cn.inflight
	cn.inflight[0][3]--
	cn.inPhase[0]--
	cn.releaseCounts()
	if cn.inflight != lent || len(l.counts) != 0 {
		t.Fatal("counts given back while phase 3 still had an operation in flight")
	}
	cn.inflight[2][5]--
	cn.inPhase[2]--
	cn.releaseCounts()
	if cn.inflight != nil || len(l.counts) != 1 || l.counts[0] != lent {
		t.Fatalf("after the last operation: conn holds %p, pool %v; want nil and the lent counts", cn.inflight, l.counts)
	}
	if *l.takeCounts() != (phaseCounts{}) {
		t.Fatal("pooled counts not zero")
	}
}

// TestParserParkedBetweenRequests: a connection keeps its parser while a
// request is partly received and gives it back once answered; the next
// connection of the loop to receive bytes takes that parser, and a parked
// connection resumes in its own Mode (here, binary).
func TestParserParkedBetweenRequests(t *testing.T) {
	l := &loopState{}
	srv := &Server{}
	a, b := &conn{srv: srv, loop: l}, &conn{srv: srv, loop: l}
	a.unpark()
	var cmd protocol.Command
	if n, _ := a.parser.Parse([]byte("get k"), &cmd); n != 0 {
		t.Fatalf("a partial line consumed %d bytes", n)
	}
	a.park()
	if a.parser == nil {
		t.Fatal("the parser was given back with a line partly searched")
	}
	if n, _ := a.parser.Parse([]byte("get k\r\n"), &cmd); n == 0 || cmd.Op != protocol.OpGet {
		t.Fatalf("get parsed as n=%d op=%v", n, cmd.Op)
	}
	p := a.parser
	a.queue = []*slot{{}}
	a.park()
	if a.parser == nil {
		t.Fatal("the parser was given back while a request it parsed was unanswered")
	}
	a.queue = a.queue[:0]
	a.park()
	if a.parser != nil || len(l.parsers) != 1 {
		t.Fatalf("between requests: parser %p, %d pooled; want nil, 1", a.parser, len(l.parsers))
	}
	b.unpark()
	if b.parser != p || len(l.parsers) != 0 {
		t.Fatalf("b took %p (%d left), want a's %p", b.parser, len(l.parsers), p)
	}
	bin := []byte{0x80, 0x0a, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0} // a binary noop
	if n, err := b.parser.Parse(bin, &cmd); n != len(bin) || err != nil || !cmd.Binary() {
		t.Fatalf("binary noop: n=%d err=%v binary=%v", n, err, cmd.Binary())
	}
	b.park()
	b.unpark()
	if n, err := b.parser.Parse(bin, &cmd); n != len(bin) || err != nil || !cmd.Binary() {
		t.Fatalf("after a park the connection forgot it speaks binary: n=%d err=%v", n, err)
	}
}

// TestBuffersParkedBetweenRequests: a quiet connection keeps neither its
// reply buffer nor its queue's backing array; the loop keeps small ones
// for the next connection to work and lets a large reply buffer go.
func TestBuffersParkedBetweenRequests(t *testing.T) {
	l := &loopState{}
	srv := &Server{}
	a, b := &conn{srv: srv, loop: l}, &conn{srv: srv, loop: l}
	a.unpark()
	a.enqueue(&slot{})
	a.out = append(a.out, "END\r\n"...)
	a.park()
	if a.parser == nil {
		t.Fatal("parked with a request unanswered and a reply unwritten")
	}
	a.queue = a.queue[:0]
	a.park()
	if a.parser == nil {
		t.Fatal("parked with a reply unwritten")
	}
	a.out = a.out[:0]
	a.park()
	if a.parser != nil || a.out != nil || a.queue != nil || a.qbuf != nil {
		t.Fatalf("a quiet connection keeps parser %p, out cap %d, queue cap %d", a.parser, cap(a.out), cap(a.qbuf))
	}
	if len(l.outs) != 1 || len(l.queues) != 1 {
		t.Fatalf("loop keeps %d reply and %d queue buffers, want 1 and 1", len(l.outs), len(l.queues))
	}
	b.unpark()
	if cap(b.out) == 0 || cap(b.qbuf) == 0 || len(b.queue) != 0 || len(l.outs) != 0 || len(l.queues) != 0 {
		t.Fatalf("b took out cap %d, queue cap %d (len %d); loop left %d, %d", cap(b.out), cap(b.qbuf), len(b.queue), len(l.outs), len(l.queues))
	}
	b.out = make([]byte, 0, maxPooledOut+1)
	b.park()
	if b.out != nil || len(l.outs) != 0 {
		t.Fatalf("a large reply buffer: b keeps cap %d, loop keeps %d; want neither", cap(b.out), len(l.outs))
	}
}
