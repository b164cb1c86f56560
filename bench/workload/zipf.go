package workload

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// Zipf draws popularity ranks 0..n-1 where rank k-1 has probability
// proportional to k^-s, for any exponent s > 0 — including s ≤ 1, which
// math/rand's Zipf rejects. It uses rejection-inversion sampling (Hörmann and
// Derflinger, 1996): invert the integral of the continuous envelope x^-s, round
// to the nearest integer, and accept unless the point falls in the thin gap
// between the envelope and the step function. The expected number of trials
// per draw is close to 1 for every s, and the state is O(1) in n.
//
// A Zipf is immutable after construction and safe for concurrent use; the
// randomness comes from the *rand.Rand passed to Rank.
type Zipf struct {
	n           float64
	s           float64
	hIntegralX1 float64 // H(1.5) - h(1): the envelope area left of rank 1's cell
	hIntegralN  float64 // H(n + 0.5): the envelope area up to the last cell
	sCut        float64 // points with k - x <= sCut are accepted without the H test
}

// NewZipf returns a sampler over n ranks with exponent s. s must be positive
// and finite; n at least 1.
func NewZipf(n uint64, s float64) (*Zipf, error) {
	if n == 0 {
		return nil, errors.New("zipf: need at least one rank")
	}
	if !(s > 0) || math.IsInf(s, 0) {
		return nil, fmt.Errorf("zipf: exponent %v must be positive and finite", s)
	}
	z := &Zipf{n: float64(n), s: s}
	z.hIntegralX1 = z.hIntegral(1.5) - 1
	z.hIntegralN = z.hIntegral(z.n + 0.5)
	z.sCut = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z, nil
}

// N is the number of ranks.
func (z *Zipf) N() uint64 { return uint64(z.n) }

// Exponent is s.
func (z *Zipf) Exponent() float64 { return z.s }

// Rank draws one rank in [0, n); 0 is the most popular.
func (z *Zipf) Rank(r *rand.Rand) uint64 {
	for {
		u := z.hIntegralN + r.Float64()*(z.hIntegralX1-z.hIntegralN)
		x := z.hIntegralInverse(u)
		k := math.Floor(x + 0.5)
		if k < 1 {
			k = 1
		} else if k > z.n {
			k = z.n
		}
		if k-x <= z.sCut || u >= z.hIntegral(k+0.5)-z.h(k) {
			return uint64(k) - 1
		}
	}
}

// h is the unnormalised mass x^-s.
func (z *Zipf) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

// hIntegral is H(x) = ∫₁ˣ t^-s dt = (x^(1-s) - 1)/(1-s), written so it stays
// exact as s → 1, where it becomes log x.
func (z *Zipf) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1OverX((1-z.s)*lx) * lx
}

// hIntegralInverse is H⁻¹.
func (z *Zipf) hIntegralInverse(x float64) float64 {
	t := x * (1 - z.s)
	if t < -1 {
		t = -1 // rounding can step just past the pole; the limit is 0
	}
	return math.Exp(log1pOverX(t) * x)
}

// log1pOverX is log(1+x)/x, continuous at 0.
func log1pOverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

// expm1OverX is (e^x - 1)/x, continuous at 0.
func expm1OverX(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x*(1.0/3)*(1+0.25*x))
}

// ZipfProbabilities returns the exact probability of each rank 0..n-1 for
// exponent s ≥ 0 (s = 0 is uniform). It is the oracle the sampler is tested
// against and what reports use to state expected hit ratios.
func ZipfProbabilities(n int, s float64) []float64 {
	p := make([]float64, n)
	var sum float64
	for k := n; k >= 1; k-- { // smallest terms first keeps the sum accurate
		p[k-1] = math.Pow(float64(k), -s)
		sum += p[k-1]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}
