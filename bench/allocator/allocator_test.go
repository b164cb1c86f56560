package allocator

import (
	"testing"

	"github.com/strata-cache/strata/placement"
)

// The stress test scaled down to 7.5 K shards on 100 servers: from a
// random start every violation is fixed, no metric ends above 1.10 × its
// mean, and the moves stay within 5 % of the lower bound. Outcomes only,
// never speed: the solve time is the benchmark's business.
func TestScaledDownStress(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		s, err := RunStress(Spec{Shards: 7500, Servers: 100, Seed: seed, CapacitySpread: 0.2}, placement.Options{}, Clock{})
		if err != nil {
			t.Fatal(err)
		}
		if s.ViolationsBefore < 50 {
			t.Fatalf("seed %d: a random start with only %d violations stresses nothing", seed, s.ViolationsBefore)
		}
		if s.ViolationsAfter != 0 || s.Exhausted {
			t.Fatalf("seed %d: %d violations left %v (budget exhausted %v)", seed, s.ViolationsAfter, s.AfterByGoal, s.Exhausted)
		}
		for k, v := range s.PerMetric {
			if v > 1.10+1e-9 {
				t.Fatalf("seed %d: %s max/mean %.4f", seed, Metrics[k], v)
			}
		}
		if float64(s.Moves) > 1.05*float64(s.MinMoves) || s.Moves < s.MinMoves {
			t.Fatalf("seed %d: %d moves for a lower bound of %d", seed, s.Moves, s.MinMoves)
		}
	}
}

// Two servers die after the scaled-down solve: emergency mode places all
// their replicas, each on a server that took no other replica of the same
// dead server, and the periodic pass after it finds the balance intact.
func TestScaledDownFailover(t *testing.T) {
	s, err := RunStress(Spec{Shards: 7500, Servers: 100, Seed: 5, CapacitySpread: 0.2, Fail: 2}, placement.Options{}, Clock{})
	if err != nil {
		t.Fatal(err)
	}
	f := s.Failover
	if f == nil || f.Unplaced < 100 || f.LeftUnplaced != 0 || f.Placed != f.Unplaced || f.SpreadAfter != 0 {
		t.Fatalf("failover %+v", f)
	}
	if f.Targets < f.Unplaced/2 || f.MaxOverMean > 1.10+1e-9 {
		t.Fatalf("failover %+v", f)
	}
}

// Replicas add zone spread to the stress: still every violation fixed.
func TestScaledDownStressWithReplicas(t *testing.T) {
	s, err := RunStress(Spec{Shards: 2500, Servers: 100, Seed: 4, Replicas: 3}, placement.Options{}, Clock{})
	if err != nil {
		t.Fatal(err)
	}
	if s.BeforeByGoal["zone"] == 0 || s.ViolationsAfter != 0 {
		t.Fatalf("zone violations before %d, violations after %v", s.BeforeByGoal["zone"], s.AfterByGoal)
	}
}

func TestGenerateIsSeeded(t *testing.T) {
	a := Generate(Spec{Shards: 1000, Servers: 10, Seed: 9})
	b := Generate(Spec{Shards: 1000, Servers: 10, Seed: 9})
	lo, hi := a.Shards[0].Load[0], a.Shards[0].Load[0]
	for i := range a.Shards {
		if a.Shards[i].Load[0] != b.Shards[i].Load[0] || a.Assignment[i][0] != b.Assignment[i][0] {
			t.Fatalf("shard %d differs between two generations with one seed", i)
		}
		lo, hi = min(lo, a.Shards[i].Load[0]), max(hi, a.Shards[i].Load[0])
	}
	if lo < 1 || hi > 20 || hi/lo < 15 {
		t.Fatalf("byte loads span %.2f..%.2f, want most of 1..20", lo, hi)
	}
}

// On the same skewed loads over 16 servers the load-aware allocator ends
// at or below 1.10 × mean on every metric and below the static spread.
func TestCompareStaticAndLoadAware(t *testing.T) {
	c, err := Compare(Spec{Shards: 4096, Servers: 16, Seed: 1}, placement.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Aware) != 1 {
		t.Fatalf("%d load-aware rows", len(c.Aware))
	}
	aware := c.Aware[0]
	if aware.MaxOverMean > 1.10+1e-9 || aware.MaxOverMean >= c.Static.MaxOverMean {
		t.Fatalf("static %.4f, load-aware %.4f", c.Static.MaxOverMean, aware.MaxOverMean)
	}
	if c.Static.MaxOverMean <= 1.10 {
		t.Fatalf("static spread %.4f already within 1.10: the comparison shows nothing", c.Static.MaxOverMean)
	}
}

// BenchmarkSolve75K is the full-size stress test: 75 K shards on 1 K
// servers from a random start (generation is outside the timer).
func BenchmarkSolve75K(b *testing.B) { benchSolve(b, 75000, 1000) }

// BenchmarkSolve375K is the 5× problem: 375 K shards on 5 K servers.
func BenchmarkSolve375K(b *testing.B) { benchSolve(b, 375000, 5000) }

func benchSolve(b *testing.B, shards, servers int) {
	p := Generate(Spec{Shards: shards, Servers: servers, Seed: 1, CapacitySpread: 0.2})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := placement.Solve(p, placement.Options{Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		if res.After.Total() != 0 {
			b.Fatalf("%d violations left", res.After.Total())
		}
	}
}
