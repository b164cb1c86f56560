package promote

import (
	"math"
	"testing"
)

func TestProbabilityMatchesPaper(t *testing.T) {
	cases := []struct {
		k    int
		want float64 // percent, rounded to two decimals
	}{{10, 27.20}, {32, 63.79}, {100, 95.82}}
	for _, c := range cases {
		got := math.Round(Probability(32, c.k)*10000) / 100
		if got != c.want {
			t.Errorf("N=32 k=%d: got %.2f%%, want %.2f%%", c.k, got, c.want)
		}
	}
	first := 0
	for k := 1; k < 1000; k++ {
		if Probability(32, k) >= 0.9 {
			first = k
			break
		}
	}
	if first != 73 {
		t.Errorf("90%% first reached at k=%d, want 73", first)
	}
}

func TestProbabilityEdges(t *testing.T) {
	if Probability(32, 0) != 0 || Probability(32, -3) != 0 || Probability(1, 5) != 1 || Probability(8, 1) != 0.125 {
		t.Fatalf("edges: %v %v %v %v", Probability(32, 0), Probability(32, -3), Probability(1, 5), Probability(8, 1))
	}
	if ProbabilityRate(0, 10) != 0 || ProbabilityRate(1, 1) != 1 || ProbabilityRate(0.5, 2) != 0.75 {
		t.Fatalf("rate edges: %v %v %v", ProbabilityRate(0, 10), ProbabilityRate(1, 1), ProbabilityRate(0.5, 2))
	}
	// Large N, where 1 − 1/N rounds: P(N, 1) must still be 1/N.
	if got := Probability(MaxThreshold, 1); math.Abs(got-1.0/MaxThreshold) > 1e-24 {
		t.Fatalf("P(2^31, 1) = %v", got)
	}
}

func TestDecideExactCounts(t *testing.T) {
	p, err := NewPolicy(32, []Rule{{Prefix: "photos:", Threshold: 64}, {Prefix: "photos:hot:", Threshold: 2}})
	if err != nil {
		t.Fatal(err)
	}
	// r sweeps [0, 2^64) in 4096 equal steps: exactly 4096/N of them promote.
	count := func(key string) int {
		n := 0
		for i := uint64(0); i < 4096; i++ {
			if p.Decide([]byte(key), i<<52) {
				n++
			}
		}
		return n
	}
	if got := count("user:1"); got != 4096/32 {
		t.Errorf("global rule: %d promotions, want %d", got, 4096/32)
	}
	if got := count("photos:1"); got != 4096/64 {
		t.Errorf("photos: rule: %d promotions, want %d", got, 4096/64)
	}
	if got := count("photos:hot:1"); got != 4096/2 {
		t.Errorf("longest prefix: %d promotions, want %d", got, 4096/2)
	}
	one, _ := NewPolicy(1, nil)
	if !one.Decide([]byte("k"), math.MaxUint64) {
		t.Error("N=1 must always promote")
	}
}

func TestNewPolicyRejects(t *testing.T) {
	if _, err := NewPolicy(0, nil); err == nil {
		t.Error("threshold 0 accepted")
	}
	if _, err := NewPolicy(8, []Rule{{Prefix: "", Threshold: 8}}); err == nil {
		t.Error("empty prefix accepted")
	}
	if _, err := NewPolicy(8, []Rule{{Prefix: "a", Threshold: 8}, {Prefix: "a", Threshold: 4}}); err == nil {
		t.Error("duplicate prefix accepted")
	}
	if _, err := NewPolicy(8, []Rule{{Prefix: "a", Threshold: 0}}); err == nil {
		t.Error("rule threshold 0 accepted")
	}
}
