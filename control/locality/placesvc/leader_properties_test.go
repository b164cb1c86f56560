package placesvc

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
)

// TestLeaderProperties drives a leader with random counter batches, pins,
// manual requests and acks over a simulated day, seeded, and checks after
// every round:
//   - the journal names exactly the moves in flight, and every row in
//     Prepare or Migrating is one of them;
//   - no μ-shard moves to a region it left less than MaxTTL + Grace ago;
//   - moves start no faster than the token bucket allows: at most
//     Burst + Rate·t in any window of length t;
//   - a move is promoted (settled) only once every live member
//     acknowledged its Prepare (Migrating) write.
func TestLeaderProperties(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { leaderProperties(t, seed) })
	}
}

func leaderProperties(t *testing.T, seed uint64) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 11))
	ld, tb := newLeader(t, policy)
	regions := []string{"a", "b", "c"}
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("u: %d", i)
		create(t, ld, names[i], regions[i%3], t0)
	}
	members := map[string]int64{"m1": 0, "m2": 0}
	for m, r := range members {
		ld.SetAck(m, r)
	}
	starts := map[[2]string][]time.Time{} // by pair of regions (from, to)
	prepRevs := map[string]int64{}
	kinds := map[string]int{}
	now := t0
	rev := int64(100)
	for step := 0; step < 600; step++ {
		now = now.Add(time.Duration(rng.IntN(300)) * time.Second)
		switch k := rng.IntN(10); {
		case k < 5:
			rev++
			r := regions[rng.IntN(3)]
			var cs []locsvc.Count
			for i := 0; i < 1+rng.IntN(4); i++ {
				cs = append(cs, locsvc.Count{Name: names[rng.IntN(len(names))], N: uint64(1 + rng.IntN(50)), Remote: rng.IntN(2) == 0})
			}
			ld.Counts("counters/"+r+"/0", rev, batch(r, now, cs...), now)
		case k == 5:
			p := ""
			if rng.IntN(2) == 0 {
				p = regions[rng.IntN(3)]
			}
			ld.SetPin(names[rng.IntN(len(names))], p)
		case k == 6:
			ld.Manual(names[rng.IntN(len(names))], regions[rng.IntN(3)])
		default:
			// Members catch up to the store's revision, one at a time.
			m := fmt.Sprint("m", 1+rng.IntN(2))
			_, cur, _ := ld.st.Get(ctx, "x")
			members[m] = cur
			ld.SetAck(m, cur)
		}
		before := map[string]loctable.Entry{}
		for _, n := range names {
			e, _, _ := tb.Get(ctx, n)
			before[n] = e
		}
		evs, err := ld.Round(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			kinds[ev.Kind+" "+ev.Reason]++
			switch ev.Kind {
			case "prepare":
				_, prepRevs[ev.Name], _, _ = tb.Read(ctx, ev.Name)
				e := before[ev.Name]
				pair := [2]string{e.Owner, ev.To}
				starts[pair] = append(starts[pair], now)
				for i := len(e.History) - 1; i >= 0; i-- {
					if h := e.History[i]; h.From == ev.To {
						if now.Sub(h.At) < policy.MaxTTL+grace {
							t.Fatalf("step %d: %s back to %s %v after leaving it", step, ev.Name, ev.To, now.Sub(h.At))
						}
						break
					}
				}
			case "migrating":
				for m, a := range members {
					if a < prepRevs[ev.Name] {
						t.Fatalf("step %d: %s promoted while %s acked %d < its Prepare at %d", step, ev.Name, m, a, prepRevs[ev.Name])
					}
				}
				if before[ev.Name].State != loctable.Prepare {
					t.Fatalf("step %d: promoted %s from %v", step, ev.Name, before[ev.Name].State)
				}
				_, prepRevs[ev.Name], _, _ = tb.Read(ctx, ev.Name) // the Migrating write, for Stable
			case "stable":
				for m, a := range members {
					if a < prepRevs[ev.Name] {
						t.Fatalf("step %d: %s settled while %s acked %d < its Migrating at %d", step, ev.Name, m, a, prepRevs[ev.Name])
					}
				}
			}
		}
		// The journal is exactly the moves in flight.
		j, err := tb.Journal(ctx)
		if err != nil {
			t.Fatal(err)
		}
		inFlight := 0
		for _, n := range names {
			e, _, _ := tb.Get(ctx, n)
			if e.State != loctable.Stable {
				inFlight++
				if _, ok := ld.moves[n]; !ok {
					t.Fatalf("step %d: %s is %v but not in flight", step, n, e.State)
				}
			}
		}
		if len(j) != inFlight || len(ld.moves) != inFlight {
			t.Fatalf("step %d: journal %v, moves %d, rows moving %d", step, j, len(ld.moves), inFlight)
		}
	}
	// The rate cap of each pair of regions over every window between two
	// of its starts.
	for pair, starts := range starts {
		for i := range starts {
			for k := i; k < len(starts); k++ {
				window := starts[k].Sub(starts[i]).Seconds()
				if n := float64(k - i + 1); n > policy.Burst+policy.Rate*window+1e-9 {
					t.Fatalf("%v moves %v started within %.0fs", n, pair, window)
				}
			}
		}
	}
	// The run must exercise what it checks (about 50 moves and 20 refused
	// returns per seed).
	if kinds["prepare better"] == 0 || kinds["refused return_wait"] == 0 || kinds["migrating "] == 0 {
		t.Fatalf("events %v: the run exercises too little", kinds)
	}
}
