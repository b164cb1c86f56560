package assign

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// maxOverMean is the largest server load over the mean server load.
func maxOverMean(owner []int, load []float64, servers int) float64 {
	per := make([]float64, servers)
	total := 0.0
	for sh, o := range owner {
		per[o] += load[sh]
		total += load[sh]
	}
	mx := 0.0
	for _, l := range per {
		mx = math.Max(mx, l)
	}
	return mx / (total / float64(servers))
}

// On 16 servers with skewed shard loads, the static rendezvous spread is
// far from balanced and one periodic plan brings every server within 10 %
// of the mean, or as close as the hottest shard allows (a shard above the
// mean server load needs read replicas, not placement). The figures are
// the side-by-side comparison.
func TestSkewedLoadsStaticVersusLoop(t *testing.T) {
	const shards, servers = 4096, 16
	dists := []struct {
		name string
		load func(rng *rand.Rand, rank int) float64
	}{
		// Most shards light, a few 20x heavier: 20^(u^3).
		{"20x", func(rng *rand.Rand, _ int) float64 { u := rng.Float64(); return math.Pow(20, u*u*u) }},
		// Zipf over shard rank, s = 0.9: the hottest shard alone carries
		// more than the mean server's share.
		{"zipf0.9", func(_ *rand.Rand, rank int) float64 { return 1e4 / math.Pow(float64(rank+1), 0.9) }},
	}
	for _, d := range dists {
		for _, seed := range []uint64{1, 2, 3} {
			rng := rand.New(rand.NewPCG(seed, 99))
			list := make([]shardmap.Server, servers)
			in := &Input{Members: make([]Member, servers), Requests: make([]float64, shards), Bytes: make([]float64, shards)}
			for i := range list {
				list[i] = shardmap.Server{Addr: string(rune('A'+i)) + ":11211", Weight: 1}
				in.Members[i] = Member{Addr: list[i].Addr, Weight: 1}
			}
			hottest, total := 0.0, 0.0
			for r, sh := range rng.Perm(shards) {
				in.Requests[sh] = d.load(rng, r)
				in.Bytes[sh] = 1 + 19*rng.Float64()
				hottest, total = math.Max(hottest, in.Requests[sh]), total+in.Requests[sh]
			}
			m, err := shardmap.Rendezvous(seed, shards, list)
			if err != nil {
				t.Fatal(err)
			}
			in.Owner = make([]int, shards)
			for sh := range in.Owner {
				in.Owner[sh] = m.Owner(sh)
			}
			staticReq, staticBytes := maxOverMean(in.Owner, in.Requests, servers), maxOverMean(in.Owner, in.Bytes, servers)
			out, err := Plan(in, Options{Mode: placement.Periodic, Seed: seed})
			if err != nil {
				t.Fatal(err)
			}
			loopReq, loopBytes := maxOverMean(out.Owner, in.Requests, servers), maxOverMean(out.Owner, in.Bytes, servers)
			t.Logf("%s seed %d: requests max/mean static %.3f loop %.3f; bytes static %.3f loop %.3f; %d of %d shards moved",
				d.name, seed, staticReq, loopReq, staticBytes, loopBytes, len(out.Moves), shards)
			bound := math.Max(1.10, 1.02*hottest/(total/servers))
			if loopReq > bound || loopBytes > 1.10 {
				t.Errorf("%s seed %d: the loop leaves max/mean %.3f requests (bound %.3f), %.3f bytes", d.name, seed, loopReq, bound, loopBytes)
			}
			if loopReq >= staticReq {
				t.Errorf("%s seed %d: the loop (%.3f) is no better than static (%.3f)", d.name, seed, loopReq, staticReq)
			}
		}
	}
}
