package allocator

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/strata-cache/strata/placement"
)

// Metric names, in the order of every Capacity and Load.
var Metrics = []string{"bytes", "requests_per_s", "shards"}

// Spec describes a generated problem.
type Spec struct {
	Shards, Servers int
	Seed            uint64
	// Zones spreads servers round-robin over this many zones (default 10).
	Zones int
	// Replicas per shard (default 1).
	Replicas int
	// Skew is the ratio of the largest shard load to the smallest on the
	// bytes and requests metrics (default 20, Shard Manager's ZippyDB
	// snapshot).
	Skew float64
	// CapacitySpread is how far byte capacities vary between servers, as a
	// fraction (Shard Manager's snapshot: up to 0.2). 0 gives equal servers.
	CapacitySpread float64
	// Fail is how many servers RunStress kills after its solve, to time
	// emergency mode (0: none).
	Fail int
	// MeanUtil is the mean utilisation of bytes, requests and shard count
	// once balanced (default 0.70, 0.65, 0.60).
	MeanUtil [3]float64
}

func (s *Spec) defaults() {
	if s.Zones == 0 {
		s.Zones = 10
	}
	if s.Replicas == 0 {
		s.Replicas = 1
	}
	if s.Skew == 0 {
		s.Skew = 20
	}
	if s.MeanUtil == [3]float64{} {
		s.MeanUtil = [3]float64{0.70, 0.65, 0.60}
	}
}

// Generate builds the problem of spec: shard loads skewed log-uniformly
// between 1 and Skew (bytes from one draw, requests/s the geometric mean
// of that draw and another, so the two correlate without being equal; the
// third metric counts shards), capacities sized for the mean utilisations,
// and each replica on a uniformly random server. The loads are the same
// for a seed whatever the assignment.
func Generate(spec Spec) *placement.Problem {
	spec.defaults()
	rng := rand.New(rand.NewPCG(spec.Seed, 0xa110c))
	p := &placement.Problem{Metrics: 3}
	loads := make([]float64, 3*spec.Shards)
	total := [3]float64{}
	logSkew := math.Log(spec.Skew)
	p.Shards = make([]placement.Shard, spec.Shards)
	for i := range p.Shards {
		a := math.Exp(rng.Float64() * logSkew)
		b := math.Exp(rng.Float64() * logSkew)
		l := loads[3*i : 3*i+3 : 3*i+3]
		l[0], l[1], l[2] = a, math.Sqrt(a*b), 1
		for k := range total {
			total[k] += l[k] * float64(spec.Replicas)
		}
		p.Shards[i] = placement.Shard{Load: l, Replicas: spec.Replicas, Region: -1}
	}
	caps := make([]float64, 3*spec.Servers)
	weights := make([]float64, spec.Servers)
	sumW := 0.0
	for i := range weights {
		weights[i] = 1 + spec.CapacitySpread*(rng.Float64()-0.5)
		sumW += weights[i]
	}
	p.Servers = make([]placement.Server, spec.Servers)
	for i := range p.Servers {
		c := caps[3*i : 3*i+3 : 3*i+3]
		c[0] = total[0] / spec.MeanUtil[0] * weights[i] / sumW
		c[1] = total[1] / spec.MeanUtil[1] / float64(spec.Servers)
		c[2] = total[2] / spec.MeanUtil[2] / float64(spec.Servers)
		p.Servers[i] = placement.Server{Capacity: c, Zone: i % spec.Zones}
	}
	p.Assignment = RandomAssignment(spec.Shards, spec.Servers, spec.Replicas, rng)
	return p
}

// RandomAssignment puts each replica on a uniformly random server, the
// replicas of a shard on distinct servers. replicas must not exceed
// servers.
func RandomAssignment(shards, servers, replicas int, rng *rand.Rand) [][]int {
	flat := make([]int, shards*replicas)
	out := make([][]int, shards)
	for i := range out {
		a := flat[i*replicas : (i+1)*replicas : (i+1)*replicas]
		for j := range a {
			s := rng.IntN(servers)
			for slices.Contains(a[:j], s) {
				s = rng.IntN(servers)
			}
			a[j] = s
		}
		out[i] = a
	}
	return out
}
