package workload

import (
	"math"
	"math/rand/v2"
	"testing"
)

// chiSquare bins observed rank counts against exact probabilities, merging
// adjacent ranks until each bin expects at least minExpected draws, and
// returns the statistic and the degrees of freedom.
func chiSquare(counts []int, probs []float64, draws int) (stat float64, df int) {
	const minExpected = 20
	var obs, exp float64
	bins := 0
	for i := range probs {
		obs += float64(counts[i])
		exp += probs[i] * float64(draws)
		if exp >= minExpected || i == len(probs)-1 {
			stat += (obs - exp) * (obs - exp) / exp
			bins++
			obs, exp = 0, 0
		}
	}
	return stat, bins - 1
}

// chiSquareCritical is the 99.9th percentile of χ² with df degrees of
// freedom (Wilson–Hilferty approximation, accurate to a few per cent here).
func chiSquareCritical(df int) float64 {
	const z = 3.090 // standard normal 99.9th percentile
	k := float64(df)
	t := 1 - 2/(9*k) + z*math.Sqrt(2/(9*k))
	return k * t * t * t
}

func sampleZipf(t *testing.T, n uint64, s float64, draws int, seed uint64) []int {
	t.Helper()
	z, err := NewZipf(n, s)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 7))
	counts := make([]int, n)
	for i := 0; i < draws; i++ {
		k := z.Rank(r)
		if k >= n {
			t.Fatalf("rank %d out of range [0, %d)", k, n)
		}
		counts[k]++
	}
	return counts
}

func TestZipfMatchesExactProbabilities(t *testing.T) {
	const n, draws = 1000, 400_000
	for _, s := range []float64{0.8, 1.0, 1.2, 0.3, 2.5} {
		counts := sampleZipf(t, n, s, draws, uint64(s*1000))
		stat, df := chiSquare(counts, ZipfProbabilities(n, s), draws)
		t.Logf("alpha %v: chi-square %.1f df %d crit %.1f", s, stat, df, chiSquareCritical(df))
		if crit := chiSquareCritical(df); stat > crit {
			t.Errorf("alpha %v: chi-square %.1f with %d df exceeds the 99.9%% critical value %.1f", s, stat, df, crit)
		}
		// The head is where a biased sampler shows first: rank 1's
		// frequency within 4 standard deviations of its probability.
		p0 := ZipfProbabilities(n, s)[0]
		sd := math.Sqrt(p0 * (1 - p0) / draws)
		if got := float64(counts[0]) / draws; math.Abs(got-p0) > 4*sd {
			t.Errorf("alpha %v: rank 1 frequency %.5f, want %.5f ± %.5f", s, got, p0, 4*sd)
		}
	}
}

// The chi-square test has the power to tell neighbouring exponents apart;
// otherwise the test above could not fail.
func TestZipfChiSquareRejectsWrongExponent(t *testing.T) {
	const n, draws = 1000, 400_000
	counts := sampleZipf(t, n, 0.8, draws, 1)
	stat, df := chiSquare(counts, ZipfProbabilities(n, 0.85), draws)
	if stat <= chiSquareCritical(df) {
		t.Fatalf("samples of alpha 0.8 passed as alpha 0.85 (chi-square %.1f, df %d)", stat, df)
	}
}

func TestZipfEdges(t *testing.T) {
	if _, err := NewZipf(0, 1); err == nil {
		t.Error("NewZipf(0, 1) accepted an empty rank set")
	}
	for _, s := range []float64{0, -1, math.Inf(1), math.NaN()} {
		if _, err := NewZipf(10, s); err == nil {
			t.Errorf("NewZipf(10, %v) accepted a bad exponent", s)
		}
	}
	counts := sampleZipf(t, 1, 0.9, 100, 3)
	if counts[0] != 100 {
		t.Errorf("one rank: got %v", counts)
	}
	// A huge key space costs no memory and stays in range.
	z, err := NewZipf(1<<40, 0.7)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 10000; i++ {
		if k := z.Rank(r); k >= 1<<40 {
			t.Fatalf("rank %d out of range", k)
		}
	}
}

func TestZipfProbabilitiesSumToOne(t *testing.T) {
	for _, s := range []float64{0, 0.8, 1, 1.2} {
		var sum float64
		p := ZipfProbabilities(500, s)
		for _, v := range p {
			sum += v
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("alpha %v: probabilities sum to %v", s, sum)
		}
		if s == 0 && p[0] != p[499] {
			t.Errorf("alpha 0 is not uniform: %v vs %v", p[0], p[499])
		}
	}
}
