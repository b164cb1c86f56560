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

// Zipf(0.9) reads over 4096 shards on 16 servers, scaled until the band
// holds: every shard's reads per reader end within the band (or at the
// replica cap), the map stays valid, and the figures are logged side by
// side — read max/mean of static rendezvous, of the loop, of the loop with
// replicas (band: high = half a server's mean share, up to 4 readers).
// Replicas go to the server carrying the fewest reads, but the allocator
// does not count a replica's reads when it balances owners, so the loop
// with replicas is not held to a better max/mean than the loop alone:
// the measured figures say how far that simple rule gets.
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
		t.Logf("seed %d: read max/mean static %.3f, loop %.3f, loop with replicas %.3f (%d replicas of %d shards, %d rounds)",
			seed, static, loop, scaled, len(pub.Replicas), shards-countFalse(replicated(pub, shards)), rounds)
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
