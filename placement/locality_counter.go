package placement

import (
	"math"
	"time"
)

// Decayed is an access count in which the past weighs less: a count's
// weight halves every half-life, so the score of a region sums its
// accesses over a window of a few half-lives, recent ones weighted most
// (after ten half-lives an access weighs under 0.1 %).
//
// A Decayed is a value, mergeable and order-insensitive: proxies count
// their own accesses and ship them in batches; the placement service adds
// the batches in whatever order they arrive (Add with the batch's time, or
// Merge) and gets the same value as if it had seen every access itself.
//
// Invariant: N >= 0. The zero Decayed is an empty count.
type Decayed struct {
	// N is the count as of At.
	N float64
	// At is when N was last brought up to date.
	At time.Time
}

// Value is the count as of now. A count from the future (a proxy whose
// clock runs ahead) is not decayed, and never grows.
func (d Decayed) Value(now time.Time, halfLife time.Duration) float64 {
	return d.N * weight(now.Sub(d.At), halfLife)
}

// Add counts n accesses that happened at t. The result is stated at the
// later of t and d.At, so a late batch neither rewinds nor inflates it.
func (d Decayed) Add(t time.Time, n float64, halfLife time.Duration) Decayed {
	return d.Merge(Decayed{N: n, At: t}, halfLife)
}

// Merge adds two counts of the same region.
func (d Decayed) Merge(o Decayed, halfLife time.Duration) Decayed {
	if o.At.After(d.At) {
		d, o = o, d
	}
	return Decayed{N: d.N + o.N*weight(d.At.Sub(o.At), halfLife), At: d.At}
}

// weight is 2^(-age/halfLife), and 1 for age <= 0.
func weight(age, halfLife time.Duration) float64 {
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(halfLife))
}

// Visits counts the separate times a region used a μ-shard, decayed like
// its accesses: uses less than a gap apart are one visit. A read that
// misses and the fill that follows it are one visit and two accesses.
//
// Invariant: Last is the latest use counted (zero: none), and every use
// within gap of it, before or after, adds nothing.
type Visits struct {
	Decayed
	Last time.Time
}

// Visit records a use at t: a new visit if t is at least gap away from
// the latest one counted, else part of it. Uses may arrive out of order
// (batches of several strata); an earlier one at least gap before Last is
// a visit of its own and leaves Last as it is.
func (v Visits) Visit(t time.Time, gap, halfLife time.Duration) Visits {
	if !v.Last.IsZero() && t.Sub(v.Last).Abs() < gap {
		return v
	}
	v.Decayed = v.Decayed.Add(t, 1, halfLife)
	if t.After(v.Last) {
		v.Last = t
	}
	return v
}

// Visit records region's use of a μ-shard at t in v, with MigrateAfter as
// the gap: a burst of use shorter than MigrateAfter is one visit, as it
// is one remote episode for MigrateAfter. p must be Validated.
func (p LocalityPolicy) Visit(v Visits, t time.Time) Visits {
	return v.Visit(t, p.MigrateAfter, p.HalfLife)
}

// Bucket is the global migration rate cap as pure state: a token bucket
// that fills at a rate up to a burst. The placement service keeps one and
// threads it through every Decide.
//
// The zero Bucket is full: the first Take finds burst tokens.
type Bucket struct {
	Tokens float64
	// At is when Tokens was last brought up to date; zero: never used.
	At time.Time
}

// Take refills b up to now at rate tokens per second, capped at burst, and
// takes one token if there is one. It reports whether it took one. A
// clock that goes back does not refill.
func (b Bucket) Take(now time.Time, rate, burst float64) (Bucket, bool) {
	b = b.refill(now, rate, burst)
	if b.Tokens < 1 {
		return b, false
	}
	b.Tokens--
	return b, true
}

func (b Bucket) refill(now time.Time, rate, burst float64) Bucket {
	if b.At.IsZero() {
		return Bucket{Tokens: burst, At: now}
	}
	if el := now.Sub(b.At); el > 0 {
		b.Tokens = math.Min(burst, b.Tokens+rate*el.Seconds())
		b.At = now
	}
	return b
}
