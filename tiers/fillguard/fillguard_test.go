package fillguard

import "testing"

func TestWriteWaitsBehindFill(t *testing.T) {
	g := New(4096, 1)
	sl := g.SlotFor([]byte("k"))
	g0 := sl.Snapshot()
	if !sl.BeginFill(g0) {
		t.Fatal("fill refused with no write in between")
	}
	resumed := false
	if sl.BeginWrite(Waiter{Loop: 3, Resume: func() { resumed = true }}) {
		t.Fatal("write may remove copies while a fill is in flight")
	}
	if sl.BeginFill(sl.Snapshot()) {
		t.Fatal("a new fill started while a write waits")
	}
	w := sl.EndFill()
	if len(w) != 1 || w[0].Loop != 3 {
		t.Fatalf("released %+v, want the one waiter of loop 3", w)
	}
	w[0].Resume()
	if !resumed {
		t.Fatal("waiter not resumed")
	}
	if sl.BeginFill(g0) {
		t.Fatal("fill with a snapshot older than the write accepted")
	}
	if !sl.BeginFill(sl.Snapshot()) {
		t.Fatal("fresh fill refused")
	}
}

func TestBumpAllEndsEverySnapshot(t *testing.T) {
	g := New(3, 7) // rounded up to 4 slots
	if len(g.slots) != 4 {
		t.Fatalf("%d slots, want 4", len(g.slots))
	}
	keys := [][]byte{[]byte("a"), []byte("b"), []byte("c"), []byte("d")}
	snaps := make([]uint64, len(keys))
	for i, k := range keys {
		snaps[i] = g.SlotFor(k).Snapshot()
	}
	g.BumpAll()
	for i, k := range keys {
		if g.SlotFor(k).BeginFill(snaps[i]) {
			t.Fatalf("key %s: a fill from before flush_all was accepted", k)
		}
	}
}

// A write marked from the moment it is sent (IssueWrite) keeps every fill
// from beginning until its copies are removed (EndWrite), whatever
// snapshot the fill holds; Writing tells a reader of the tier of record.
func TestNoFillBeginsWhileAWriteIsUnderWay(t *testing.T) {
	g := New(16, 1)
	sl := g.SlotFor([]byte("k"))
	if sl.Writing() {
		t.Fatal("a fresh slot reports a write under way")
	}
	g0 := sl.Snapshot()
	sl.IssueWrite()
	sl.IssueWrite()
	if !sl.Writing() {
		t.Fatal("writes issued, Writing false")
	}
	if sl.BeginFill(g0) {
		t.Fatal("a fill began while a write was under way")
	}
	sl.EndWrite()
	if !sl.Writing() || sl.BeginFill(sl.Snapshot()) {
		t.Fatal("one of two writes ended: a fill began, or Writing is false")
	}
	sl.EndWrite()
	if sl.Writing() || !sl.BeginFill(g0) {
		t.Fatal("both writes ended: Writing still true, or a fill with an unchanged snapshot refused")
	}
}
