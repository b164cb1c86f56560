package assign

import (
	"errors"
	"math"
)

// Band is the per-replica read load a shard should stay within (reads per
// second). Above High a shard gains a read replica; it loses one when the
// remaining replicas would carry at most Low each. Low < High/2 (checked)
// keeps a shard that just gained a replica from losing it at once: after
// a split at just above High each of r+1 replicas carries High·r/(r+1) ≥
// High/2 > Low.
type Band struct {
	Low, High float64
}

// ErrBand is returned for a band that would flap.
var ErrBand = errors.New("assign: scaling band needs 0 <= low < high/2")

// Replicas decides each shard's replica count from its read rate: one
// step up or down per call (a shard's load must be re-measured with its
// new count before the next step), never below 1 nor above max. It is
// pure; cur is not modified.
//
// Reads spread over the replicas and writes and deletes go to all of
// them, so only the read rate enters the band.
func Replicas(reads []float64, cur []int, band Band, max int) ([]int, error) {
	if !(band.Low >= 0 && band.Low < band.High/2) || math.IsInf(band.High, 0) {
		return nil, ErrBand
	}
	if max < 1 {
		max = 1
	}
	out := make([]int, len(cur))
	for sh, r := range cur {
		if r < 1 {
			r = 1
		}
		if r > max {
			r = max
		}
		load := 0.0
		if sh < len(reads) {
			load = reads[sh]
		}
		switch {
		case load/float64(r) > band.High && r < max:
			r++
		case r > 1 && load/float64(r-1) <= band.Low:
			r--
		}
		out[sh] = r
	}
	return out, nil
}
