package layered

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/internal/gatetest"
)

// A get that read L2's value of a write still under way must not be
// followed, on the same connection, by a get of an older value: memcached
// never answers a key older than it answered before. Here a promotion of
// the old value passed its guard before the write was sent, a get missed
// L1 before that copy landed and read the new value at L2, and the copy
// then landed: the next get's L1 hit would return the old value, unless
// the get that saw the new value removed L1's copy before it answered.
func TestReadsNeverGoBackThroughAPromotionInFlight(t *testing.T) {
	f := newFixture(t, Config{Threshold: 32})
	l1, l2 := gatetest.New(f.l1), gatetest.New(f.l2)
	coin := func() uint64 {
		if len(f.coins) == 0 {
			return ^uint64(0)
		}
		c := f.coins[0]
		f.coins = f.coins[1:]
		return c
	}
	var err error
	if f.tier, err = New(Config{Threshold: 32, Rand: coin}, l1, l2, inline{}); err != nil {
		t.Fatal(err)
	}
	finished := map[*tiers.Op]bool{}
	start := func(req tiers.Request) *tiers.Op {
		op := &tiers.Op{Req: req}
		op.Done = func(op *tiers.Op) { finished[op] = true }
		f.tier.Do(op)
		return op
	}
	do(t, f.l2, set("n", "220", 0))

	// A read promotes 220: its add to L1 is sent, not yet run.
	f.coins = []uint64{0}
	fill := start(get("n"))
	l1.Deliver(l1.Take(t, tiers.KindGet, "n")) // miss
	l2.Deliver(l2.Take(t, tiers.KindGet, "n")) // 220, promoted
	if !finished[fill] || string(fill.Res.Value) != "220" {
		t.Fatalf("the promoting read: done %v, %q", finished[fill], fill.Res.Value)
	}
	add := l1.Take(t, tiers.KindSet, "n")

	// A write of 221 runs at L2; its reply is not read yet.
	write := start(set("n", "221", 0))
	w := l2.Take(t, tiers.KindSet, "n")
	l2.Run(w)

	// A read misses L1 and reads 221 at L2; then the old copy lands.
	read := start(get("n"))
	l1.Deliver(l1.Take(t, tiers.KindGet, "n"))
	l2.Deliver(l2.Take(t, tiers.KindGet, "n"))
	l1.Deliver(add)
	l1.DeliverAll() // whatever the read sent to L1 meanwhile
	if !finished[read] || string(read.Res.Value) != "221" {
		t.Fatalf("the read after the write ran at L2: done %v, %q; want 221", finished[read], read.Res.Value)
	}

	// The same connection reads again.
	next := start(get("n"))
	gatetest.Settle(t, func() bool { return finished[next] }, l1, l2)
	if string(next.Res.Value) != "221" {
		t.Fatalf("the next read: %q (level %d); a read already answered 221", next.Res.Value, next.Res.Level)
	}

	l2.Deliver(w)
	l1.DeliverAll()
	if !finished[write] || write.Res.Status != tiers.StatusStored {
		t.Fatalf("the write: done %v, %v", finished[write], write.Res.Status)
	}
	if r := do(t, f.l1, get("n")); r.Status == tiers.StatusHit {
		t.Fatalf("L1 after the write: %q, want no copy", r.Value)
	}
	if n := f.tier.Stats().ReadsInvalidating; n != 2 {
		t.Fatalf("%d reads invalidating, want 2: both reads at L2 met the write under way", n)
	}
	// The first read waited behind the promotion; the write did not (the
	// copy had landed by its reply).
	if n := f.tier.Stats().WritesDelayed; n != 0 {
		t.Fatalf("%d writes delayed, want 0: a read that waited is not a delayed write", n)
	}
}
