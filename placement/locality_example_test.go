package placement_test

import (
	"fmt"
	"time"

	"github.com/strata-cache/strata/placement"
)

// A μ-shard owned by region a is used mostly from b. The placement service
// asks at each remote access; it moves once migrate_after has passed, and
// the next question finds it settled.
func ExampleDecide() {
	p, _ := placement.LocalityPolicy{MigrateAfter: 10 * time.Minute, MinInterval: 6 * time.Hour}.Validated()
	regions := []placement.RegionState{{Name: "a"}, {Name: "b"}, {Name: "c", OverCapacity: true}}
	t0 := time.Date(2026, 5, 1, 8, 0, 0, 0, time.UTC)
	m := placement.MuShardState{Owner: "a", FirstRemote: t0, Counters: map[string]placement.Decayed{}, Visits: map[string]placement.Visits{}}
	var bucket placement.Bucket
	for _, min := range []int{0, 5, 12, 20} {
		now := t0.Add(time.Duration(min) * time.Minute)
		m.Counters["b"] = m.Counters["b"].Add(now, 10, p.HalfLife)
		m.Counters["c"] = m.Counters["c"].Add(now, 50, p.HalfLife) // busier, but full
		m.Visits["b"] = p.Visit(m.Visits["b"], now)                // +5m is part of +0m's visit
		m.Visits["c"] = p.Visit(m.Visits["c"], now)
		var d placement.Decision
		d, bucket = placement.Decide(now, p, regions, m, bucket, 1)
		if !d.Migrate {
			fmt.Printf("+%2dm: stay (%s)\n", min, d.Reason)
		} else {
			fmt.Printf("+%2dm: migrate to %s (%s)\n", min, d.To, d.Reason)
			m.Owner, m.LastMigration, m.FirstRemote = d.To, now, time.Time{}
		}
	}
	// Output:
	// + 0m: stay (waiting)
	// + 5m: stay (waiting)
	// +12m: migrate to b (better)
	// +20m: stay (min_interval)
}
