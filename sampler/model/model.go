package model

import (
	"math"

	"github.com/strata-cache/strata/tiers/promote"
)

// Thresholds are the values of N the report evaluates, the ones the long-tail
// study compared.
var Thresholds = []int{8, 16, 32, 64, 128}

// MaxTrials is the largest number of trials in the published model table.
const MaxTrials = 200

// TrialsToReach returns the smallest k with promote.Probability(n, k) ≥ p, or −1 if p
// is not in (0, 1). For N = 32 and p = 0.9 it is 73.
func TrialsToReach(n int, p float64) int {
	if p <= 0 || p >= 1 {
		return -1
	}
	if n <= 1 {
		return 1
	}
	// k = ceil(log(1−p) / log(1−1/N)); the loop corrects the float rounding
	// of the closed form by at most a step either way.
	k := int(math.Ceil(math.Log1p(-p) / math.Log1p(-1/float64(n))))
	for k > 1 && promote.Probability(uint32(n), k-1) >= p {
		k--
	}
	for promote.Probability(uint32(n), k) < p {
		k++
	}
	return k
}

// ExpectedL1Hits returns the expected number of a key's k reads that L1
// serves under threshold N. The first promotion happens at trial J, J
// geometric with success 1/N; every read before and including it goes to L2
// and every later one hits L1. The reads that do not hit L1 are min(J, k),
// whose expectation is Σ_{i<k} (1 − 1/N)^i = N·P(N, k), so the L1 hits are
// k − N·P(N, k).
func ExpectedL1Hits(n, k int) float64 {
	if k <= 0 {
		return 0
	}
	if n <= 1 {
		return float64(k - 1)
	}
	h := float64(k) - float64(n)*promote.Probability(uint32(n), k)
	if h < 0 { // float noise for k = 1
		return 0
	}
	return h
}

// Point is one entry of the model table.
type Point struct {
	Threshold   int     `json:"threshold"`
	Trials      int     `json:"trials"`
	Probability float64 `json:"probability"`
}

// Table returns P(N, k) for every N in thresholds and k in 1..maxTrials,
// ordered by threshold, then trials.
func Table(thresholds []int, maxTrials int) []Point {
	out := make([]Point, 0, len(thresholds)*maxTrials)
	for _, n := range thresholds {
		for k := 1; k <= maxTrials; k++ {
			out = append(out, Point{Threshold: n, Trials: k, Probability: promote.Probability(uint32(n), k)})
		}
	}
	return out
}
