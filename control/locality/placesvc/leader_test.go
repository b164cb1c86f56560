package placesvc

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// policy: 10 minutes after the first remote access, 6 hours between
// moves, values live at most 6 hours; one token a minute, two at once.
var policy = placement.LocalityPolicy{
	HalfLife: time.Hour, MigrateAfter: 10 * time.Minute, MinInterval: 6 * time.Hour,
	MaxTTL: 6 * time.Hour, Rate: 1.0 / 60, Burst: 2,
}

const grace = 30 * time.Second

// newLeader leads on a fresh memory store; the test drives it with the
// time as an argument, so every outcome is exact.
func newLeader(t *testing.T, pol placement.LocalityPolicy) (*Leader, *loctable.Table) {
	t.Helper()
	return newLeaderWith(t, Config{Policy: pol, Regions: []string{"a", "b", "c"}, Grace: grace, Seed: 7})
}

// newLeaderWith is newLeader with the whole Config given.
func newLeaderWith(t *testing.T, cfg Config) (*Leader, *loctable.Table) {
	t.Helper()
	m := store.NewMemory(store.MemoryOptions{Now: func() time.Time { return t0 }})
	c := m.Connect()
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	sess, err := c.NewSession(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Campaign(ctx, sess, locsvc.ElectionName, "t")
	if err != nil {
		t.Fatal(err)
	}
	ld, err := NewLeader(cfg, c, l)
	if err != nil {
		t.Fatal(err)
	}
	return ld, loctable.New(c, "")
}

func create(t *testing.T, ld *Leader, name, region string, now time.Time) {
	t.Helper()
	if ev, err := ld.Create(context.Background(), name, region, now); err != nil || ev.Kind != "created" {
		t.Fatalf("create %s: %v %v", name, ev, err)
	}
}

// round runs a Round and checks its events, in order.
func round(t *testing.T, ld *Leader, now time.Time, want ...string) {
	t.Helper()
	evs, err := ld.Round(context.Background(), now)
	if err != nil {
		t.Fatalf("round at %v: %v", now.Sub(t0), err)
	}
	got := make([]string, len(evs))
	for i, e := range evs {
		got[i] = e.String()
	}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Fatalf("round at +%v: %q, want %q", now.Sub(t0), got, want)
	}
}

func batch(region string, at time.Time, counts ...locsvc.Count) locsvc.Batch {
	return locsvc.Batch{Region: region, At: at, Counts: counts}
}

// visitedBefore ships one access of name from region MigrateAfter before
// at, not marked remote: an earlier visit, so that a batch at at is the
// region's second (placement.MinEvidence asks for more than one).
func visitedBefore(ld *Leader, region, name string, at time.Time) {
	at = at.Add(-ld.cfg.Policy.MigrateAfter)
	ld.Counts("visit/"+region+"/"+name+"/"+at.String(), 1, batch(region, at, locsvc.Count{Name: name, N: 1}), at)
}

// TestRemoteOnlyMigrates: a μ-shard created in a and used only from b
// moves to b once migrate_after has passed since its first remote access,
// through Prepare (until every member acknowledged), Migrating (for the
// grace window) and Stable; it does not move back before min_interval,
// nor to a region it left before the values it left there expired.
func TestRemoteOnlyMigrates(t *testing.T) {
	ld, tb := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	ld.SetAck("m-a", 0)
	visitedBefore(ld, "b", "u: 1", t0)
	ld.Counts("counters/m-b/0", 10, batch("b", t0, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), t0)
	round(t, ld, t0)
	round(t, ld, t0.Add(10*time.Minute-time.Second))
	at := t0.Add(10 * time.Minute)
	round(t, ld, at, "prepare u: 1 e2 b better")
	e, rev, _, _ := tb.Read(context.Background(), "u: 1")
	if e.State != loctable.Prepare || e.Location().Serving() != "a" {
		t.Fatalf("row after the decision: %+v", e)
	}
	round(t, ld, at.Add(time.Hour)) // m-a has not applied the Prepare write
	ld.SetAck("m-a", rev)
	promoted := at.Add(2 * time.Hour)
	round(t, ld, promoted, "migrating u: 1 e2 b ")
	round(t, ld, promoted.Add(grace-time.Nanosecond))
	round(t, ld, promoted.Add(grace)) // m-a has not applied the Migrating write
	_, rev, _, _ = tb.Read(context.Background(), "u: 1")
	ld.SetAck("m-a", rev)
	round(t, ld, promoted.Add(grace), "stable u: 1 e2 b ")
	if n, f := ld.Settled(), ld.InFlight(); n != 1 || f != 0 {
		t.Fatalf("settled %d, in flight %d", n, f)
	}
	if j, _ := tb.Journal(context.Background()); len(j) != 0 {
		t.Fatalf("journal after settling: %v", j)
	}

	// Now a uses it heavily: not before min_interval (6h after the
	// promotion), and not back to a before its values there expired
	// (max_ttl + grace after the promotion).
	back := promoted.Add(time.Hour)
	ld.Counts("counters/m-a/0", 11, batch("a", back, locsvc.Count{Name: "u: 1", N: 1000, Remote: true}), back)
	round(t, ld, back)
	round(t, ld, promoted.Add(6*time.Hour), "refused u: 1 e0 a return_wait")
	round(t, ld, promoted.Add(6*time.Hour+grace-time.Second))
	if n := ld.Returns(); n != 0 {
		t.Fatalf("%d returns before any", n)
	}
	round(t, ld, promoted.Add(6*time.Hour+grace), "prepare u: 1 e3 a better")
	// Back to a within min_interval + max_ttl (12h) of leaving it: thrash,
	// counted.
	if n := ld.Returns(); n != 1 {
		t.Fatalf("%d returns, want 1", n)
	}
}

// TestReturnAsksLess: a μ-shard goes back to the region it left on
// scoring above its owner there, where a region it never left needs
// Evidence × the owner's score. The check that skips a row read for a
// μ-shard no region outscores knows the region left too, or it would
// skip u: 1.
func TestReturnAsksLess(t *testing.T) {
	ld, _ := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	create(t, ld, "u: 2", "b", t0)
	visitedBefore(ld, "b", "u: 1", t0)
	ld.Counts("counters/m-b/0", 10, batch("b", t0, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), t0)
	left := t0.Add(10 * time.Minute)
	round(t, ld, left, "prepare u: 1 e2 b better")
	round(t, ld, left, "migrating u: 1 e2 b ")
	round(t, ld, left.Add(grace), "stable u: 1 e2 b ")

	// Past min_interval and max_ttl + grace: u: 1 at b and u: 2 at b
	// score alike, 10 at home and 12 from elsewhere (under 1.5 × 10).
	back := left.Add(7 * time.Hour)
	ld.Counts("counters/m-b/0", 11, batch("b", back, locsvc.Count{Name: "u: 1", N: 10}, locsvc.Count{Name: "u: 2", N: 10}), back)
	ld.Counts("counters/m-a/0", 12, batch("a", back, locsvc.Count{Name: "u: 1", N: 12, Remote: true}), back)
	ld.Counts("counters/m-c/0", 13, batch("c", back, locsvc.Count{Name: "u: 2", N: 12, Remote: true}), back)
	// A return does not wait migrate_after; u: 2's claim does, and then
	// falls short of the evidence.
	round(t, ld, back, "prepare u: 1 e3 a better")
	round(t, ld, back.Add(10*time.Minute), "migrating u: 1 e3 a ")
	// Decided: u: 1 at left, then both at back (u: 2 waiting), u: 2 after
	// migrate_after.
	if got, want := ld.Totals(), (Totals{Decided: 4, Started: 2, Returns: 1, Settled: 1}); got != want {
		t.Fatalf("totals %+v, want %+v", got, want)
	}
}

// TestPinsWin: a pin moves a μ-shard whatever the counters and intervals
// say, a pin to an unknown region moves nothing, a rule pin covers its
// rule's μ-shards, and a manual move against a pin is refused.
func TestPinsWin(t *testing.T) {
	ld, _ := newLeader(t, placement.LocalityPolicy{HalfLife: time.Hour, MigrateAfter: time.Hour, MinInterval: 6 * time.Hour, MaxTTL: time.Hour, Rate: 100, Burst: 100})
	for _, n := range []string{"u: 1", "u: 2", "g: 1", "g: 2"} {
		create(t, ld, n, "a", t0)
	}
	// a uses u: 1 only; the pin sends it to c anyway.
	ld.Counts("counters/m-a/0", 1, batch("a", t0, locsvc.Count{Name: "u: 1", N: 100}), t0)
	ld.SetPin("u: 1", "c")
	ld.SetPin("u: 2", "nowhere")
	ld.SetRulePin("g:", "b")
	round(t, ld, t0, "prepare g: 1 e2 b pin", "prepare g: 2 e2 b pin", "prepare u: 1 e2 c pin")
	round(t, ld, t0, "migrating g: 1 e2 b ", "migrating g: 2 e2 b ", "migrating u: 1 e2 c ")
	ld.Manual("u: 2", "b") // u: 2 is pinned to a region nobody knows; the pin still wins
	round(t, ld, t0.Add(time.Second), "refused u: 2 e0 b pinned to nowhere")
	ld.SetPin("u: 2", "")
	ld.Manual("u: 2", "b")
	round(t, ld, t0.Add(2*time.Second), "prepare u: 2 e2 b manual")
	ld.Manual("u: 1", "zz")
	round(t, ld, t0.Add(grace), "stable g: 1 e2 b ", "stable g: 2 e2 b ", "stable u: 1 e2 c ", "migrating u: 2 e2 b ", "refused u: 1 e0 zz pinned to c")
}

// TestCreateWherePinned: a μ-shard pinned, or whose rule is pinned, to a
// known region is created there rather than in the region that asked, so
// the pin costs no move; a pin to an unknown region leaves it with the
// asking region.
func TestCreateWherePinned(t *testing.T) {
	ld, table := newLeader(t, policy)
	ld.SetRulePin("g:", "b")
	ld.SetRulePin("h:", "nowhere")
	ld.SetPin("u: 9", "c")
	for _, c := range []struct{ name, want string }{{"g: 1", "b"}, {"u: 9", "c"}, {"h: 1", "a"}, {"u: 1", "a"}} {
		ev, err := ld.Create(context.Background(), c.name, "a", t0)
		if err != nil || ev.Kind != "created" || ev.To != c.want {
			t.Fatalf("create %s from a: %v %v, want created in %s", c.name, ev, err, c.want)
		}
		e, ok, err := table.Get(context.Background(), c.name)
		if err != nil || !ok || e.Owner != c.want {
			t.Fatalf("row of %s: %+v %v %v, want owner %s", c.name, e, ok, err, c.want)
		}
	}
	round(t, ld, t0.Add(time.Minute)) // the pinned ones are where their pins say: nothing moves
}

// TestRateCap: with a burst of 2 and one token a minute, ten pinned
// μ-shards move two at once, then one a minute, in name order.
func TestRateCap(t *testing.T) {
	ld, _ := newLeader(t, policy)
	for i := 0; i < 10; i++ {
		create(t, ld, fmt.Sprintf("u: %d", i), "a", t0)
	}
	ld.SetRulePin("u:", "b")
	round(t, ld, t0, "prepare u: 0 e2 b pin", "prepare u: 1 e2 b pin")
	round(t, ld, t0.Add(59*time.Second), "migrating u: 0 e2 b ", "migrating u: 1 e2 b ")
	round(t, ld, t0.Add(60*time.Second), "prepare u: 2 e2 b pin")
	round(t, ld, t0.Add(61*time.Second), "migrating u: 2 e2 b ")
	round(t, ld, t0.Add(119*time.Second), "stable u: 0 e2 b ", "stable u: 1 e2 b ", "stable u: 2 e2 b ")
	round(t, ld, t0.Add(120*time.Second), "prepare u: 3 e2 b pin")
}

// TestRateCapPerPair: the cap is per ordered pair of regions: a→b's
// moves do not wait behind a→c's, and a→b waits on its own bucket
// (burst 2, one token a minute) whatever c's pair did.
func TestRateCapPerPair(t *testing.T) {
	ld, tb := newLeader(t, policy)
	for i := 0; i < 3; i++ {
		create(t, ld, fmt.Sprintf("g: %d", i), "a", t0)
		create(t, ld, fmt.Sprintf("u: %d", i), "a", t0)
	}
	ld.SetRulePin("g:", "c")
	ld.SetRulePin("u:", "b")
	round(t, ld, t0, "prepare g: 0 e2 c pin", "prepare g: 1 e2 c pin", "prepare u: 0 e2 b pin", "prepare u: 1 e2 b pin")
	if n := ld.RateLimited(); n != 2 {
		t.Fatalf("%d decisions held back, want g: 2 and u: 2", n)
	}
	// The moves of a round are written per destination, one transaction
	// (one revision for the members to acknowledge) each.
	rev := func(name string) int64 {
		_, r, _, err := tb.Read(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if g0, g1, u0, u1 := rev("g: 0"), rev("g: 1"), rev("u: 0"), rev("u: 1"); g0 != g1 || u0 != u1 || g0 == u0 {
		t.Fatalf("Prepare revisions g: %d %d, u: %d %d: want one per destination", g0, g1, u0, u1)
	}
	round(t, ld, t0.Add(59*time.Second), "migrating g: 0 e2 c ", "migrating g: 1 e2 c ", "migrating u: 0 e2 b ", "migrating u: 1 e2 b ")
	round(t, ld, t0.Add(60*time.Second), "prepare g: 2 e2 c pin", "prepare u: 2 e2 b pin")
}

// TestTieBreakSeeded: two regions score alike; the seed picks one, the
// same for the same seed.
func TestTieBreakSeeded(t *testing.T) {
	pick := func() string {
		ld, _ := newLeader(t, policy)
		create(t, ld, "u: t", "a", t0)
		visitedBefore(ld, "b", "u: t", t0)
		visitedBefore(ld, "c", "u: t", t0)
		ld.Counts("k/b", 1, batch("b", t0, locsvc.Count{Name: "u: t", N: 3, Remote: true}), t0)
		ld.Counts("k/c", 2, batch("c", t0, locsvc.Count{Name: "u: t", N: 3, Remote: true}), t0)
		evs, err := ld.Round(context.Background(), t0.Add(policy.MigrateAfter))
		if err != nil || len(evs) != 1 {
			t.Fatalf("%v %v", evs, err)
		}
		return evs[0].To
	}
	first := pick()
	for i := 0; i < 3; i++ {
		if got := pick(); got != first {
			t.Fatalf("seeded tie-break chose %s then %s", first, got)
		}
	}
}

// TestCountsOnce: a counter row delivered twice (a watch reset) counts
// once.
func TestCountsOnce(t *testing.T) {
	ld, _ := newLeader(t, policy)
	b := batch("b", t0, locsvc.Count{Name: "u: 1", N: 4})
	ld.Counts("counters/m/0", 5, b, t0)
	ld.Counts("counters/m/0", 5, b, t0)
	if got := ld.Counters("u: 1", t0); got["b"] != 4 {
		t.Fatalf("counters %v", got)
	}
	ld.Counts("counters/m/0", 6, batch("b", t0.Add(time.Hour), locsvc.Count{Name: "u: 1", N: 4}), t0.Add(time.Hour))
	if got := ld.Counters("u: 1", t0.Add(time.Hour)); got["b"] != 6 {
		t.Fatalf("after a newer batch an hour later: %v, want 4/2+4", got)
	}
}

// TestOneVisitMovesNothing: a foreign read that missed and its fill (two
// accesses, in batches a second apart) against an owner the leader has no
// count of move nothing; the region's next use, MigrateAfter later, does.
func TestOneVisitMovesNothing(t *testing.T) {
	ld, _ := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	ld.Counts("counters/m-b/0", 1, batch("b", t0, locsvc.Count{Name: "u: 1", N: 1, Remote: true}), t0)
	fill := t0.Add(time.Second)
	ld.Counts("counters/m-b/0", 2, batch("b", fill, locsvc.Count{Name: "u: 1", N: 1, Remote: true}), fill)
	round(t, ld, t0.Add(policy.MigrateAfter))
	if got := ld.Totals().Decided; got != 1 {
		t.Fatalf("decided %d, want 1 (owner_best)", got)
	}
	next := t0.Add(policy.MigrateAfter + time.Second)
	ld.Counts("counters/m-b/0", 3, batch("b", next, locsvc.Count{Name: "u: 1", N: 1, Remote: true}), next)
	round(t, ld, next, "prepare u: 1 e2 b better")
}
