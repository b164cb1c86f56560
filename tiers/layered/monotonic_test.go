package layered

import (
	"bytes"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// gate is a tier whose operations wait until the test runs them: run
// executes one at the inner store (the moment a server would), deliver
// hands its result back (the moment its reply is read). Between the two
// other operations may run and complete, as on separate connections.
type gate struct {
	tiers.NoPhase
	inner tiers.Tier
	q     []*gated
}

type gated struct {
	op  *tiers.Op
	res tiers.Result
	ran bool
}

func (g *gate) Do(op *tiers.Op) { g.q = append(g.q, &gated{op: op}) }

// take removes and returns the oldest waiting operation of kind on key.
func (g *gate) take(t *testing.T, kind tiers.Kind, key string) *gated {
	t.Helper()
	for i, p := range g.q {
		if p.op.Req.Kind == kind && string(p.op.Req.Key) == key {
			g.q = append(g.q[:i], g.q[i+1:]...)
			return p
		}
	}
	t.Fatalf("no %v of %q waiting", kind, key)
	return nil
}

func (g *gate) run(p *gated) {
	var sub tiers.Op
	sub.Req = p.op.Req
	sub.Done = func(*tiers.Op) {}
	g.inner.Do(&sub)
	p.res, p.ran = sub.Res, true
}

func (g *gate) deliver(p *gated) {
	if !p.ran {
		g.run(p)
	}
	p.op.Res = p.res
	p.op.Done(p.op)
}

// A get that read L2's value of a write still under way must not be
// followed, on the same connection, by a get of an older value: memcached
// never answers a key older than it answered before. Here a promotion of
// the old value passed its guard before the write was sent, a get missed
// L1 before that copy landed and read the new value at L2, and the copy
// then landed: the next get's L1 hit would return the old value, unless
// the get that saw the new value removed L1's copy before it answered.
func TestReadsNeverGoBackThroughAPromotionInFlight(t *testing.T) {
	f := newFixture(t, Config{Threshold: 32})
	l1, l2 := &gate{inner: f.l1}, &gate{inner: f.l2}
	var err error
	coin := func() uint64 {
		if len(f.coins) == 0 {
			return ^uint64(0)
		}
		c := f.coins[0]
		f.coins = f.coins[1:]
		return c
	}
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
	done := func(op *tiers.Op) bool { return finished[op] }
	do(t, f.l2, set("n", "220", 0))

	// A read promotes 220: its add to L1 is sent, not yet run.
	f.coins = []uint64{0}
	fill := start(get("n"))
	l1.deliver(l1.take(t, tiers.KindGet, "n")) // miss
	l2.deliver(l2.take(t, tiers.KindGet, "n")) // 220, promoted
	if !done(fill) || string(fill.Res.Value) != "220" {
		t.Fatalf("the promoting read: done %v, %q", done(fill), fill.Res.Value)
	}
	add := l1.take(t, tiers.KindSet, "n")

	// A write of 221 runs at L2; its reply is not read yet.
	write := start(set("n", "221", 0))
	w := l2.take(t, tiers.KindSet, "n")
	l2.run(w)

	// A read misses L1 and reads 221 at L2.
	read := start(get("n"))
	l1.deliver(l1.take(t, tiers.KindGet, "n"))
	l2.deliver(l2.take(t, tiers.KindGet, "n"))
	l1.deliver(add)     // the old copy lands in L1
	for len(l1.q) > 0 { // whatever the read sent to L1 meanwhile
		l1.deliver(l1.q[0])
		l1.q = l1.q[1:]
	}
	if !done(read) || string(read.Res.Value) != "221" || f.tier.Stats().ReadsInvalidating != 1 {
		t.Fatalf("the read after the write ran at L2: done %v, %q, %d reads invalidating; want 221, after removing L1's copy",
			done(read), read.Res.Value, f.tier.Stats().ReadsInvalidating)
	}

	// The same connection reads again.
	next := start(get("n"))
	for !done(next) {
		switch {
		case len(l1.q) > 0:
			p := l1.q[0]
			l1.q = l1.q[1:]
			l1.deliver(p)
		case len(l2.q) > 0:
			p := l2.q[0]
			l2.q = l2.q[1:]
			l2.deliver(p)
		default:
			t.Fatal("the next read waits on nothing")
		}
	}
	if !bytes.Equal(next.Res.Value, []byte("221")) {
		t.Fatalf("the next read: %q (level %d); a read already answered 221", next.Res.Value, next.Res.Level)
	}

	l2.deliver(w)
	for len(l1.q) > 0 {
		p := l1.q[0]
		l1.q = l1.q[1:]
		l1.deliver(p)
	}
	if !done(write) || write.Res.Status != tiers.StatusStored {
		t.Fatalf("the write: done %v, %v", done(write), write.Res.Status)
	}
	if r := do(t, f.l1, get("n")); r.Status == tiers.StatusHit {
		t.Fatalf("L1 after the write: %q, want no copy", r.Value)
	}
}
