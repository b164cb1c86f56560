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
	a, b := &conn{loop: l, work: &work{}}, &conn{loop: l, work: &work{}}
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
	cn := &conn{loop: l, work: &work{}}
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

// TestWorkParkedBetweenRequests: a connection keeps its work (parser,
// queue, reply buffer) while a request is partly received, unanswered or
// unwritten, and gives it back once between requests, reading then as
// nothing in flight; the next connection of the loop to receive bytes
// takes that work, and a parked connection resumes in its own Mode (here,
// binary).
func TestWorkParkedBetweenRequests(t *testing.T) {
	l := &loopState{}
	srv := &Server{}
	a, b := &conn{srv: srv, loop: l, work: &parked}, &conn{srv: srv, loop: l, work: &parked}
	a.unpark()
	w := a.work
	var cmd protocol.Command
	if n, _ := a.parser.Parse([]byte("get k"), &cmd); n != 0 {
		t.Fatalf("a partial line consumed %d bytes", n)
	}
	a.park()
	if a.work != w {
		t.Fatal("the work was given back with a line partly searched")
	}
	if n, _ := a.parser.Parse([]byte("get k\r\n"), &cmd); n == 0 || cmd.Op != protocol.OpGet {
		t.Fatalf("get parsed as n=%d op=%v", n, cmd.Op)
	}
	a.enqueue(&slot{})
	a.park()
	if a.work != w {
		t.Fatal("the work was given back while a request it parsed was unanswered")
	}
	a.queue = a.queue[:0]
	a.out = append(a.out, "END\r\n"...)
	a.park()
	if a.work != w {
		t.Fatal("the work was given back with a reply unwritten")
	}
	a.out = a.out[:0]
	a.park()
	if a.work != &parked || len(l.works) != 1 {
		t.Fatalf("between requests: work %p, %d pooled; want parked, 1", a.work, len(l.works))
	}
	if a.parser != nil || len(a.queue) != 0 || a.held != nil || len(a.out) != 0 || a.keys != 0 {
		t.Fatal("a parked connection reads as something in flight")
	}
	b.unpark()
	if b.work != w || len(l.works) != 0 || cap(b.out) == 0 || cap(b.qbuf) == 0 || len(b.queue) != 0 {
		t.Fatalf("b took %p (%d left; out cap %d, queue cap %d len %d), want a's %p with its buffers",
			b.work, len(l.works), cap(b.out), cap(b.qbuf), len(b.queue), w)
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
	b.out = make([]byte, 0, maxPooledOut+1)
	b.park()
	if len(l.works) != 1 || l.works[0].out != nil {
		t.Fatalf("a large reply buffer: the loop keeps %d works, the first with out cap %d; want 1, 0", len(l.works), cap(l.works[0].out))
	}
}
