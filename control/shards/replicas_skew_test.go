package shards

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/placement/assign"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// maxOverMeanReads is the largest server read rate over the mean, each
// shard's reads split evenly over its owner and its replicas.
func maxOverMeanReads(p *Published, reads []float64) float64 {
	_, carried := replicaLoad(p, reads)
	total, mx := 0.0, 0.0
	for _, c := range carried {
		total += c
		mx = math.Max(mx, c)
	}
	return mx / (total / float64(len(carried)))
}

// Zipf(0.9) reads over 4096 shards on 16 servers: the load-aware loop
// alone cannot bring the busiest server near the mean, since the hottest
// shard carries more than a server's mean share; read replicas can. The
// shards are scaled until the band holds (high = half a server's mean
// share, up to 4 readers), then the next periodic plan, which counts each
// replica's reads as carried by its server, balances the owners around
// them. The figures are the closing note's side-by-side comparison:
// read max/mean of static rendezvous, the loop, the loop with replicas
// before and after that plan.
func TestZipfReadsSpreadOverReplicas(t *testing.T) {
	const shards, servers = 4096, 16
	for _, seed := range []uint64{1, 2, 3} {
		rng := rand.New(rand.NewPCG(seed, 99))
		list := make([]shardmap.Server, servers)
		in := &assign.Input{Members: make([]assign.Member, servers), Requests: make([]float64, shards), Bytes: make([]float64, shards)}
		pub := &Published{}
		for i := range list {
			list[i] = shardmap.Server{Addr: string(rune('A'+i)) + ":11211", Weight: 1}
			in.Members[i] = assign.Member{Addr: list[i].Addr, Weight: 1}
			pub.Members = append(pub.Members, MemberState{Addr: list[i].Addr, Weight: 1})
		}
		total := 0.0
		for r, sh := range rng.Perm(shards) {
			in.Requests[sh] = 1e4 / math.Pow(float64(r+1), 0.9)
			in.Bytes[sh] = 1
			total += in.Requests[sh]
		}
		m, err := shardmap.Rendezvous(seed, shards, list)
		if err != nil {
			t.Fatal(err)
		}
		in.Owner = make([]int, shards)
		for sh := range in.Owner {
			in.Owner[sh] = m.Owner(sh)
		}
		pub.Owner = append([]int(nil), in.Owner...)
		static := maxOverMeanReads(pub, in.Requests)
		out, err := assign.Plan(in, assign.Options{Mode: placement.Periodic, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		pub.Owner = out.Owner
		loop := maxOverMeanReads(pub, in.Requests)
		mean := total / servers
		band := assign.Band{Low: mean / 5, High: mean / 2}
		rounds := 0
		for ; rounds < 20; rounds++ {
			stepReplicas(pub, true)
			added, dropped, err := scaleReplicas(pub, in.Requests, band, 4, 0)
			if err != nil {
				t.Fatal(err)
			}
			if added+dropped == 0 {
				break
			}
		}
		scaled := maxOverMeanReads(pub, in.Requests)
		// The next periodic plan sees the replicas' reads as carried by
		// their members and moves owners (never a replicated shard) to
		// balance the whole.
		req := append([]float64(nil), in.Requests...)
		rin := &assign.Input{Members: in.Members, Owner: pub.Owner, Requests: req, Bytes: in.Bytes,
			Carried: shareLoads(pub, req, in.Requests)}
		out, err = assign.Plan(rin, assign.Options{Mode: placement.Periodic, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		scaledOwners := replicated(pub, shards)
		moved := 0
		for _, mv := range out.Moves {
			if !scaledOwners[mv.Shard] {
				pub.Owner[mv.Shard] = mv.To
				moved++
			}
		}
		rebalanced := maxOverMeanReads(pub, in.Requests)
		t.Logf("seed %d: read max/mean static %.3f, loop %.3f, loop with replicas %.3f (%d replicas of %d shards, %d rounds), then rebalanced %.3f (%d moves)",
			seed, static, loop, scaled, len(pub.Replicas), shards-countFalse(replicated(pub, shards)), rounds, rebalanced, moved)
		if rebalanced > 1.10 || rebalanced >= loop {
			t.Errorf("seed %d: with replicas the busiest server carries %.3f of the mean read rate (the loop alone %.3f); want <= 1.10", seed, rebalanced, loop)
		}
		if rounds == 20 {
			t.Fatalf("seed %d: scaling did not settle in 20 rounds", seed)
		}
		if err := pub.check(shards); err != nil {
			t.Fatalf("seed %d: scaled map: %v", seed, err)
		}
		for sh, r := range in.Requests {
			n := len(readers(pub, sh))
			if (r/float64(n) > band.High && n < 4) || (n > 1 && r/float64(n-1) <= band.Low) {
				t.Errorf("seed %d: shard %d, %.0f reads/s over %d readers, is outside the band %+v", seed, sh, r, n, band)
			}
		}
	}
}

func countFalse(b []bool) int {
	n := 0
	for _, v := range b {
		if !v {
			n++
		}
	}
	return n
}
