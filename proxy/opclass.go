package proxy

import (
	"math/bits"

	"github.com/strata-cache/strata/internal/stall"
	"github.com/strata-cache/strata/tiers"
)

// OpClass names a request for counting: the memcached command family it
// belongs to, whichever protocol spelt it. The set is small and fixed, so it
// is safe as a metric label.
type OpClass uint8

const (
	OpClassGet OpClass = iota
	OpClassGets
	OpClassTouch
	OpClassSet
	OpClassAdd
	OpClassReplace
	OpClassAppend
	OpClassPrepend
	OpClassCas
	OpClassDelete
	OpClassIncr
	OpClassDecr
	OpClassFlush
	numOpClasses
)

var opClassNames = [numOpClasses]string{"get", "gets", "touch", "set", "add", "replace", "append", "prepend", "cas", "delete", "incr", "decr", "flush"}

func (c OpClass) String() string { return opClassNames[c] }

// numStatuses is the number of tiers.Status values.
const numStatuses = int(tiers.StatusError) + 1

// classOf maps a request onto its class.
func classOf(r *tiers.Request) OpClass {
	switch r.Kind {
	case tiers.KindGet:
		switch {
		case r.HasTTL:
			return OpClassTouch
		case r.WantCAS:
			return OpClassGets
		}
		return OpClassGet
	case tiers.KindSet:
		if r.HasCompareCAS {
			return OpClassCas
		}
		switch r.Mode {
		case tiers.ModeAdd:
			return OpClassAdd
		case tiers.ModeReplace:
			return OpClassReplace
		case tiers.ModeAppend:
			return OpClassAppend
		case tiers.ModePrepend:
			return OpClassPrepend
		}
		return OpClassSet
	case tiers.KindDelete:
		return OpClassDelete
	case tiers.KindArith:
		if r.Mode == tiers.ModeDecr {
			return OpClassDecr
		}
		return OpClassIncr
	}
	return OpClassFlush
}

// latencyBuckets are the upper bounds, in nanoseconds, of the request
// latency histogram: 1µs doubling to about 8.4s, enough for an in-process hit
// and a cross-region forward alike.
var latencyBuckets = func() [24]int64 {
	var b [24]int64
	v := int64(1000)
	for i := range b {
		b[i] = v
		v *= 2
	}
	return b
}()

// LatencyBuckets returns the histogram's upper bounds in seconds.
func LatencyBuckets() []float64 {
	out := make([]float64, len(latencyBuckets))
	for i, b := range latencyBuckets {
		out[i] = float64(b) / 1e9
	}
	return out
}

// bucketOf is the index of the first bound at or above ns: bound i is
// 1000·2^i, so it is the bit length of (ns-1)/1000, found without a search.
func bucketOf(ns int64) int {
	if ns <= latencyBuckets[0] {
		return 0
	}
	i := bits.Len64(uint64(ns-1) / 1000)
	if i > len(latencyBuckets) {
		return len(latencyBuckets) // +Inf
	}
	return i
}

// nanotime is a monotonic clock in nanoseconds for latency measurement;
// it is the stall detector's clock, so one reading serves both.
func nanotime() int64 { return stall.Now() }
