package placement

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// genLocality draws a policy, regions and a μ-shard around now, with pins,
// unknown regions, empty counters and a partly empty bucket among them.
func genLocality(rng *rand.Rand, now time.Time) (LocalityPolicy, []RegionState, MuShardState, Bucket) {
	p, err := LocalityPolicy{
		HalfLife:     time.Duration(1+rng.IntN(120)) * time.Minute,
		MigrateAfter: time.Duration(rng.IntN(60)) * time.Minute,
		MinInterval:  time.Duration(rng.IntN(12)) * time.Hour,
		Rate:         0.01 + rng.Float64(),
		Burst:        float64(1 + rng.IntN(5)),
	}.Validated()
	if err != nil {
		panic(err)
	}
	n := 1 + rng.IntN(5)
	regions := make([]RegionState, n)
	for i := range regions {
		regions[i] = RegionState{Name: fmt.Sprintf("r%d", i), OverCapacity: rng.IntN(4) == 0, Spare: float64(rng.IntN(3))}
	}
	name := func() string {
		if rng.IntN(10) == 0 {
			return "gone" // a region the decision was not told about
		}
		return regions[rng.IntN(n)].Name
	}
	ago := func(max time.Duration) time.Time {
		if rng.IntN(4) == 0 {
			return time.Time{}
		}
		return now.Add(-time.Duration(rng.Int64N(int64(max))))
	}
	m := MuShardState{Owner: name(), Counters: map[string]Decayed{}, LastMigration: ago(24 * time.Hour), FirstRemote: ago(2 * time.Hour)}
	for _, r := range regions {
		if rng.IntN(3) > 0 {
			// Small integers make ties between regions common.
			m.Counters[r.Name] = Decayed{N: float64(rng.IntN(5)), At: now.Add(-time.Duration(rng.IntN(3)) * time.Hour)}
		}
	}
	if rng.IntN(2) == 0 {
		m.Left = name()
	}
	if rng.IntN(4) == 0 {
		m.Pin = name()
	}
	if rng.IntN(4) == 0 {
		m.RulePin = name()
	}
	b := Bucket{Tokens: p.Burst * rng.Float64(), At: now.Add(-time.Duration(rng.IntN(10)) * time.Second)}
	// Visits last, so that the draws above are those of every seed before
	// visits were known. Most regions with accesses have two visits or
	// more, some one.
	m.Visits = map[string]Visits{}
	for _, r := range regions {
		if c, ok := m.Counters[r.Name]; ok && c.N > 0 {
			m.Visits[r.Name] = Visits{Decayed: Decayed{N: float64(1 + rng.IntN(3)), At: c.At}, Last: c.At}
		}
	}
	// Pairs last of all, for the same reason: a third of the regions'
	// pairs with the owner shift or hold.
	for _, r := range regions {
		if k := rng.IntN(6); k < 2 {
			if m.Pairs == nil {
				m.Pairs = map[string]PairState{}
			}
			m.Pairs[r.Name] = PairShifting + PairState(k)
		}
	}
	return p, regions, m, b
}

const localitySeeds = 150

// TestDecideProperties checks each decision against the policy's rules:
// pins always win; otherwise no migration within min_interval or before
// migrate_after (but for a return), never to the owner or a region over
// capacity, and only to a region that scores above the owner (by Evidence
// and, unless its pair shifts, MinEvidence, in accesses and visits; never
// while its pair holds; unless it is the region the μ-shard left) and no
// lower than any other region that does.
// Equal inputs decide equally.
func TestDecideProperties(t *testing.T) {
	now := t0.Add(48 * time.Hour)
	reasons := map[Reason]int{}
	for seed := uint64(0); seed < localitySeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 1))
		for k := 0; k < 20; k++ {
			p, regions, m, b := genLocality(rng, now)
			d, after := Decide(now, p, regions, m, b, seed)
			reasons[d.Reason]++
			if again, _ := Decide(now, p, regions, m, b, seed); again != d {
				t.Fatalf("seed %d: %+v then %+v", seed, d, again)
			}
			hadToken := b.refill(now, p.Rate, p.Burst).Tokens >= 1
			if d.Migrate && after.Tokens != b.refill(now, p.Rate, p.Burst).Tokens-1 {
				t.Fatalf("seed %d: a migration without its token: %+v → %+v", seed, b, after)
			}
			pin := m.Pin
			if pin == "" {
				pin = m.RulePin
			}
			if pin != "" {
				if d.Migrate && d.To != pin {
					t.Fatalf("seed %d: pinned to %q, moved to %q", seed, pin, d.To)
				}
				if known := regionIndex(regions, pin) >= 0; known && pin != m.Owner && hadToken && !d.Migrate {
					t.Fatalf("seed %d: pinned to %q, owner %q, a token, and it stayed (%v)", seed, pin, m.Owner, d.Reason)
				}
				continue
			}
			if !d.Migrate {
				continue
			}
			if !m.LastMigration.IsZero() && now.Sub(m.LastMigration) < p.MinInterval {
				t.Fatalf("seed %d: moved %v after the last move, min_interval %v", seed, now.Sub(m.LastMigration), p.MinInterval)
			}
			waiting := now.Sub(m.FirstRemote) < p.MigrateAfter // only a return goes before migrate_after
			if m.FirstRemote.IsZero() || (waiting && d.To != m.Left) {
				t.Fatalf("seed %d: moved to %q (left %q) at %v after the first remote access (%v), migrate_after %v", seed, d.To, m.Left, now.Sub(m.FirstRemote), m.FirstRemote, p.MigrateAfter)
			}
			to := regionIndex(regions, d.To)
			if to < 0 || d.To == m.Owner || regions[to].OverCapacity {
				t.Fatalf("seed %d: moved from %q to %q in %+v", seed, m.Owner, d.To, regions)
			}
			score := func(r string) float64 { return m.Counters[r].Value(now, p.HalfLife) }
			visits := func(r string) float64 { return m.Visits[r].Value(now, p.HalfLife) }
			if !(score(d.To) > score(m.Owner)) {
				t.Fatalf("seed %d: moved to %q scoring %v from %q scoring %v", seed, d.To, score(d.To), m.Owner, score(m.Owner))
			}
			minimum := m.Pairs[d.To] == PairShifting || score(d.To) > MinEvidence && visits(d.To) > MinEvidence
			if d.To != m.Left && (m.Pairs[d.To] == PairHolding || !(score(d.To) > p.Evidence*score(m.Owner) && minimum)) {
				t.Fatalf("seed %d: moved to %q scoring %v (pair %v) from %q scoring %v: not the evidence asked, and not a return (left %q)",
					seed, d.To, score(d.To), m.Pairs[d.To], m.Owner, score(m.Owner), m.Left)
			}
			for _, r := range regions {
				if r.Name != m.Owner && !r.OverCapacity && (!waiting || r.Name == m.Left) && p.Outscores(score(r.Name), score(m.Owner), visits(r.Name), r.Name == m.Left, m.Pairs[r.Name]) && score(r.Name) > score(d.To) {
					t.Fatalf("seed %d: moved to %q (%v) over %q (%v)", seed, d.To, score(d.To), r.Name, score(r.Name))
				}
			}
		}
	}
	// Every branch must be reached, or some property above checks nothing.
	for r := ReasonPinned; r <= ReasonRateLimited; r++ {
		if reasons[r] == 0 {
			t.Errorf("no decision had reason %v: %v", r, reasons)
		}
	}
}

// TestDecideRateCap drives one bucket through a stream of decisions at
// random times and checks that no window [ti, tj] holds more migrations
// than burst + rate × (tj − ti).
func TestDecideRateCap(t *testing.T) {
	for seed := uint64(0); seed < localitySeeds; seed++ {
		rng := rand.New(rand.NewPCG(seed, 2))
		now := t0
		p, _, _, _ := genLocality(rng, now)
		p.Rate = 0.02 + 0.1*rng.Float64() // below the decisions' pace, so the cap binds
		var b Bucket
		var times []time.Time // of the migrations
		limited := 0
		for k := 0; k < 200; k++ {
			now = now.Add(time.Duration(rng.Int64N(int64(3 * time.Second))))
			_, regions, m, _ := genLocality(rng, now)
			var d Decision
			d, b = Decide(now, p, regions, m, b, seed)
			if d.Migrate {
				times = append(times, now)
			}
			if d.Reason == ReasonRateLimited {
				limited++
			}
		}
		if len(times) == 0 || limited == 0 {
			t.Fatalf("seed %d: %d migrations, %d held by the cap: the test shows nothing", seed, len(times), limited)
		}
		for i := range times {
			for j := i; j < len(times); j++ {
				if n, max := float64(j-i+1), p.Burst+p.Rate*times[j].Sub(times[i]).Seconds(); n > max+1e-9 {
					t.Fatalf("seed %d: %v migrations within %v; cap %v", seed, n, times[j].Sub(times[i]), max)
				}
			}
		}
	}
}
