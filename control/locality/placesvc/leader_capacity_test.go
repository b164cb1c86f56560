package placesvc

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
)

// capacities gives the leader one report per region ("" skips one), each
// with used bytes of a 1000-byte cache, measured at.
func capacities(ld *Leader, at time.Time, used map[string]uint64) {
	var reports []locsvc.Capacity
	for r, u := range used {
		reports = append(reports, locsvc.Capacity{Region: r, Used: u, Limit: 1000, At: at})
	}
	ld.SetCapacities(reports)
}

// TestCapacityExcludesFullRegions: a μ-shard used only from b does not
// move to b while b's cache is above the ceiling (0.9 by default), and
// does at b's next remote access once b has room again.
func TestCapacityExcludesFullRegions(t *testing.T) {
	ld, _ := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	ld.Counts("counters/m-b/0", 1, batch("b", t0, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), t0)
	at := t0.Add(policy.MigrateAfter)
	capacities(ld, at, map[string]uint64{"a": 100, "b": 900})
	round(t, ld, at) // b is full; c, the only other candidate, has no use

	later := at.Add(time.Minute)
	capacities(ld, later, map[string]uint64{"a": 100, "b": 899})
	round(t, ld, later) // decided already: nothing due until b's next access
	ld.Counts("counters/m-b/0", 2, batch("b", later, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), later)
	round(t, ld, later, "prepare u: 1 e2 b better")
}

// TestCapacityAllFullSteersNothing: when every reporting region is above
// the ceiling none is excluded, and a stale report of a full region
// excludes nothing either.
func TestCapacityAllFullSteersNothing(t *testing.T) {
	ld, _ := newLeader(t, policy)
	create(t, ld, "u: 1", "a", t0)
	create(t, ld, "u: 2", "a", t0)
	at := t0.Add(policy.MigrateAfter)
	visitedBefore(ld, "b", "u: 1", t0)
	ld.Counts("counters/m-b/0", 1, batch("b", t0, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), t0)
	capacities(ld, at, map[string]uint64{"a": 950, "b": 990})
	round(t, ld, at, "prepare u: 1 e2 b better")

	// b's report is older than CapacityMaxAge: b counts as unknown, not
	// full (a's fresh report is under the ceiling).
	stale := at.Add(time.Minute)
	ld.SetCapacities([]locsvc.Capacity{
		{Region: "a", Used: 100, Limit: 1000, At: stale},
		{Region: "b", Used: 990, Limit: 1000, At: stale.Add(-DefaultCapacityMaxAge - time.Millisecond)},
	})
	visitedBefore(ld, "b", "u: 2", stale.Add(-policy.MigrateAfter))
	ld.Counts("counters/m-b/0", 2, batch("b", stale.Add(-policy.MigrateAfter), locsvc.Count{Name: "u: 2", N: 5, Remote: true}), stale)
	round(t, ld, stale, "migrating u: 1 e2 b ", "prepare u: 2 e2 b better")
}

// TestCapacitySpareBreaksTies: b and c score alike for a μ-shard of a; the
// one with more spare memory wins, whatever the seed, and swapping their
// spare swaps the winner.
func TestCapacitySpareBreaksTies(t *testing.T) {
	at := t0.Add(policy.MigrateAfter)
	for _, c := range []struct {
		used map[string]uint64
		want string
	}{
		{map[string]uint64{"a": 100, "b": 500, "c": 200}, "prepare u: t e2 c better"},
		{map[string]uint64{"a": 100, "b": 200, "c": 500}, "prepare u: t e2 b better"},
		// c without a report has no known spare (0): b with some wins.
		{map[string]uint64{"a": 100, "b": 800}, "prepare u: t e2 b better"},
	} {
		for seed := uint64(0); seed < 8; seed++ {
			ld, _ := newLeaderWith(t, Config{Policy: policy, Regions: []string{"a", "b", "c"}, Grace: grace, Seed: seed})
			create(t, ld, "u: t", "a", t0)
			visitedBefore(ld, "b", "u: t", t0)
			visitedBefore(ld, "c", "u: t", t0)
			ld.Counts("k/b", 1, batch("b", t0, locsvc.Count{Name: "u: t", N: 3, Remote: true}), t0)
			ld.Counts("k/c", 2, batch("c", t0, locsvc.Count{Name: "u: t", N: 3, Remote: true}), t0)
			capacities(ld, at, c.used)
			round(t, ld, at, c.want)
		}
	}
}
