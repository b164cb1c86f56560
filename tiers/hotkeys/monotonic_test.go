package hotkeys

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/internal/gatetest"
)

// The read rule's copies keep the promise the layering keeps: a read
// never answers older than a read before it. A fill of the old value
// passed its guard before a write was sent; another connection on the
// same copy missed it before the fill landed and read the write's new
// value at the tier of record; the fill then landed. That connection's
// next read of its copy must not return the old value.
func TestCopyReadsNeverGoBackThroughAFillInFlight(t *testing.T) {
	l1s, l2s := twoStores(t)
	l1, inner := gatetest.New(l1s), gatetest.New(l2s)
	tier, err := New(Config{Rules: []Rule{{Prefix: "celeb:", Kind: KindRead, Split: 4}}, Now: func() int64 { return 0 }, Sample: 1},
		Deps{Inner: inner, L1: l1, Loops: inline{}})
	if err != nil {
		t.Fatal(err)
	}
	const key = "celeb:1"
	copy1 := string(appendSubKey(nil, []byte(key), 1)) // connections 1 and 5 read copy 1 of 4
	seed := &tiers.Op{Req: tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte("220"), Text: true}, Done: func(*tiers.Op) {}}
	l2s.Do(seed)
	finished := map[*tiers.Op]bool{}
	start := func(conn uint64, req tiers.Request) *tiers.Op {
		op := &tiers.Op{Req: req, Conn: conn}
		op.Done = func(op *tiers.Op) { finished[op] = true }
		tier.Do(op)
		return op
	}
	get := tiers.Request{Kind: tiers.KindGet, Key: []byte(key), WantValue: true, WantFlags: true, Text: true}

	// Connection 1 misses its copy and fills it with 220: the add is sent,
	// not yet run.
	fill := start(1, get)
	l1.Deliver(l1.Take(t, tiers.KindGet, copy1))
	inner.Deliver(inner.Take(t, tiers.KindGet, key))
	if !finished[fill] || string(fill.Res.Value) != "220" {
		t.Fatalf("the filling read: done %v, %q", finished[fill], fill.Res.Value)
	}
	add := l1.Take(t, tiers.KindSet, copy1)

	// A write of 221 runs at the tier of record; its reply is not read yet.
	write := start(2, tiers.Request{Kind: tiers.KindSet, Key: []byte(key), Value: []byte("221"), Text: true})
	w := inner.Take(t, tiers.KindSet, key)
	inner.Run(w)

	// Connection 5 misses copy 1 and reads 221; then the old fill lands.
	read := start(5, get)
	l1.Deliver(l1.Take(t, tiers.KindGet, copy1))
	inner.Deliver(inner.Take(t, tiers.KindGet, key))
	l1.Deliver(add)
	l1.DeliverAll()
	if !finished[read] || string(read.Res.Value) != "221" {
		t.Fatalf("the read after the write ran: done %v, %q; want 221", finished[read], read.Res.Value)
	}

	// Connection 5 reads again, from the same copy.
	next := start(5, get)
	gatetest.Settle(t, func() bool { return finished[next] }, l1, inner)
	if string(next.Res.Value) != "221" {
		t.Fatalf("the next read: %q (level %d); a read already answered 221", next.Res.Value, next.Res.Level)
	}

	inner.Deliver(w)
	l1.DeliverAll()
	if !finished[write] || write.Res.Status != tiers.StatusStored {
		t.Fatalf("the write: done %v, %v", finished[write], write.Res.Status)
	}
}
