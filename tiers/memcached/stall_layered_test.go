package memcached

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/layered"
)

// stallOnDelete declares a stall when the first delete passes to its tier,
// after the write it invalidates for reached L2 and before the round's
// flush: the invalidation is then unsent at the stall.
type stallOnDelete struct {
	tiers.Tier
	declare func()
	armed   bool
}

func (s *stallOnDelete) Do(op *tiers.Op) {
	if s.armed && op.Req.Kind == tiers.KindDelete {
		s.armed = false
		s.declare()
	}
	s.Tier.Do(op)
}

// A write's L1 invalidation unsent at a stall is held like any write
// (the pool cannot know who waits on it). An L1 pool flushes on return, as
// every L1 pool strata builds does, so holding it takes the L1 server out
// of service before the write is acknowledged, and the copy the
// invalidation was to remove is never served again. Without that, the
// read after the acknowledged write would return the older copy.
func TestAnL1InvalidationHeldAtAStallLeavesNoOlderCopy(t *testing.T) {
	l1mc, l2mc := memcachedtest.Start(t), memcachedtest.Start(t)
	loops := newTestLoops(1)
	d := stall.New(stall.Threshold, stall.Reading{Mono: stall.Now()})
	newPool := func(cfg Config) *Pool {
		cfg.RequestTimeout = 5 * time.Second
		p, err := New(cfg, loops)
		if err != nil {
			t.Fatal(err)
		}
		p.stall = d
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	l1 := newPool(Config{Servers: []Server{{Addr: l1mc.Addr}}, FlushOnReturn: true})
	l2 := newPool(Config{Servers: []Server{{Addr: l2mc.Addr}}})
	loops.start()
	wrapped := &stallOnDelete{Tier: l1, declare: func() {
		if !d.Beat(stall.Reading{Mono: stall.Now() + 2*int64(stall.Threshold)}) {
			t.Fatal("no stall declared")
		}
	}}
	always := func() uint64 { return 0 } // every L2 hit is promoted
	tier, err := layered.New(layered.Config{Threshold: 32, Rand: always}, wrapped, l2, loops)
	if err != nil {
		t.Fatal(err)
	}
	do := func(what string, on tiers.Tier, r tiers.Request) *tiers.Result {
		t.Helper()
		c := newCall(r)
		on.Do(&c.op)
		loops.until(t, 5*time.Second, what, func() bool { return c.done })
		return &c.op.Res
	}

	expect(t, "set v0", do("set v0", tier, set("k", "v0")), tiers.StatusStored, "")
	expect(t, "get from L2", do("get from L2", tier, get("k")), tiers.StatusHit, "v0")
	loops.until(t, 5*time.Second, "the promotion into L1", func() bool {
		r := do("get at L1", l1, get("k"))
		return r.Status == tiers.StatusHit && string(r.Value) == "v0"
	})

	wrapped.armed = true
	expect(t, "set v1, its invalidation held", do("set v1", tier, set("k", "v1")), tiers.StatusStored, "")
	if held := l1.Stats().Total.Held; held != 1 {
		t.Fatalf("L1 held %d writes at the stall, want the invalidation", held)
	}
	if st := serverState(l1, l1mc.Addr); st == "up" {
		t.Fatalf("L1 server %s after a held invalidation, want out of service", st)
	}
	expect(t, "get after the acknowledged write", do("get v1", tier, get("k")), tiers.StatusHit, "v1")
}
