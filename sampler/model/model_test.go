package model

import (
	"fmt"
	"math"
	"testing"

	"github.com/strata-cache/strata/tiers/promote"
)

func pct(p float64) string { return fmt.Sprintf("%.2f", 100*p) }

// prob is the formula the model builds on; it lives in tiers/promote.
func prob(n, k int) float64 { return promote.Probability(uint32(n), k) }

// The published figures for N = 32.
func TestProbabilityReproducesPaper(t *testing.T) {
	for _, c := range []struct {
		k    int
		want string
	}{{10, "27.20"}, {32, "63.79"}, {100, "95.82"}} {
		if got := pct(prob(32, c.k)); got != c.want {
			t.Errorf("P(32, %d) = %s %%, want %s %%", c.k, got, c.want)
		}
	}
	if got := TrialsToReach(32, 0.9); got != 73 {
		t.Errorf("TrialsToReach(32, 0.9) = %d, want 73", got)
	}
	if prob(32, 72) >= 0.9 || prob(32, 73) < 0.9 {
		t.Errorf("90 %% crossing not at 73: P(72)=%v P(73)=%v", prob(32, 72), prob(32, 73))
	}
}

func TestProbabilityEdges(t *testing.T) {
	if prob(32, 0) != 0 || prob(1, 5) != 1 || prob(8, 1) != 0.125 {
		t.Fatalf("edges: %v %v %v", prob(32, 0), prob(1, 5), prob(8, 1))
	}
	// Monotone in k, decreasing in N.
	for _, n := range Thresholds {
		prev := 0.0
		for k := 1; k <= MaxTrials; k++ {
			p := prob(n, k)
			if p <= prev || p > 1 {
				t.Fatalf("P(%d,%d)=%v not increasing from %v", n, k, p, prev)
			}
			prev = p
		}
	}
	if prob(8, 50) <= prob(128, 50) {
		t.Fatal("a smaller N must promote more")
	}
	for _, n := range []int{2, 8, 16, 32, 64, 128, 1000} {
		for _, p := range []float64{0.1, 0.5, 0.9, 0.99} {
			k := TrialsToReach(n, p)
			if prob(n, k) < p || (k > 1 && prob(n, k-1) >= p) {
				t.Errorf("TrialsToReach(%d,%v)=%d not minimal", n, p, k)
			}
		}
	}
}

// ExpectedL1Hits against the direct sum over the trial of first promotion.
func TestExpectedL1HitsMatchesSum(t *testing.T) {
	for _, n := range []int{1, 2, 8, 32, 128} {
		for _, k := range []int{1, 2, 3, 10, 73, 200} {
			var want float64
			q := 1.0
			if n == 1 {
				want = float64(k - 1)
			} else {
				ps := 1 / float64(n)
				for j := 1; j <= k; j++ {
					want += q * ps * float64(k-j)
					q *= 1 - ps
				}
			}
			if got := ExpectedL1Hits(n, k); math.Abs(got-want) > 1e-9*math.Max(1, want) {
				t.Errorf("ExpectedL1Hits(%d,%d)=%v want %v", n, k, got, want)
			}
		}
	}
}

func TestTable(t *testing.T) {
	tab := Table(Thresholds, MaxTrials)
	if len(tab) != 5*200 {
		t.Fatalf("len %d", len(tab))
	}
	p := tab[2*200+9] // N=32, k=10
	if p.Threshold != 32 || p.Trials != 10 || pct(p.Probability) != "27.20" {
		t.Fatalf("table entry %+v", p)
	}
}
