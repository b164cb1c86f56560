package proxy

import "testing"

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
