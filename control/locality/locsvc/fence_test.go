package locsvc_test

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/internal/poll"
)

// TestFence: a strata serves its region's μ-shards on its view only while
// its membership was confirmed less than FenceAfter ago (on its own
// clock: exact here), and only once its loops applied every row change up
// to its joining. Cut off the store until its lease ends, it is fenced;
// back, it joins again, and the move made while it was away reaches its
// loops before it serves again.
func TestFence(t *testing.T) { each(t, testFence) }

func testFence(t *testing.T, env harness.Env) {
	const fence = 2 * time.Second
	ctx := ctxT(t)
	tb, l := leader(t, env)
	if _, _, err := tb.Create(ctx, l, "u: 1", "eu", t0); err != nil {
		t.Fatal(err)
	}
	clock := harness.NewClock(t0) // still unless moved: every proof of membership reads t0
	u := newUpdater()
	s, c := start(t, env, "eu", "m1", u, func(c *locsvc.Config) {
		c.FenceAfter, c.Now, c.ReadTimeout, c.SessionTTL = fence, clock.Now, 300*time.Millisecond, 1
	})
	poll.Until(t, harness.Wait, "the join applied", func() bool { return !s.Fenced(t0) })
	if s.Fenced(t0.Add(fence-time.Nanosecond)) || !s.Fenced(t0.Add(fence)) {
		t.Fatalf("fenced at +%v: %v, at +%v: %v; want false, true", fence-time.Nanosecond,
			s.Fenced(t0.Add(fence-time.Nanosecond)), fence, s.Fenced(t0.Add(fence)))
	}
	// Nothing written: a read of the ack row every FenceAfter/4 proves the
	// lease alive.
	clock.Add(fence / 2)
	poll.Until(t, harness.Wait, "a heartbeat", func() bool { return !s.Fenced(t0.Add(fence)) })
	if _, err := harness.Resolve(t, s, "u: 1", false); err != nil {
		t.Fatal(err)
	}

	// Cut off: no proof of membership any more, so fenced FenceAfter after
	// the last one, whatever the watch says.
	env.Partition(t, c, true)
	cut := clock.Now()
	clock.Add(fence)
	if !s.Fenced(clock.Now()) {
		t.Fatalf("not fenced %v after the store was cut off", clock.Now().Sub(cut))
	}
	// Its lease ends; the μ-shard moves away meanwhile.
	lc := env.Connect(t)
	if env.Memory != nil {
		env.Elapse(t, 2*time.Second)
	}
	poll.Until(t, harness.Wait, "the ack row gone with the lease", func() bool { return ack(t, lc, "m1") < 0 })
	e, _, _ := tb.Get(ctx, "u: 1")
	if _, _, err := tb.Migrate(ctx, l, "u: 1", e.Epoch, "us", "manual", t0); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Promote(ctx, l, "u: 1", e.Epoch+1); err != nil {
		t.Fatal(err)
	}
	env.Partition(t, c, false)
	poll.Until(t, harness.Wait, "serving again after joining", func() bool { return !s.Fenced(clock.Now()) })
	if loc, ok := u.get("u: 1"); !ok || loc.Owner != "us" {
		t.Fatalf("serving again with the loops' view %+v (%v), want owner us", loc, ok)
	}
}
