package svgchart

import (
	"math"
	"strconv"
	"strings"
)

// Scale is how an axis maps values to positions.
type Scale uint8

const (
	Linear Scale = iota
	Log10        // ticks at powers of ten
	Log2         // ticks at powers of two
)

// Axis is one axis of a chart.
type Axis struct {
	Label    string // under the x axis, beside the y axis; "" draws none
	Min, Max float64
	Scale    Scale
	Binary   bool      // linear ticks at round multiples of KiB, MiB, ...
	Ticks    []float64 // the ticks to draw; nil: chosen from Min, Max and Scale
	// Format spells a tick. The y axis needs one; an x axis without one
	// draws no ticks (the bars of a bar chart carry their own labels).
	Format func(float64) string
}

// Pos maps v to a position in [0, length] along the axis; values below Min
// of a log axis clamp to Min.
func (a Axis) Pos(v float64, length float64) float64 {
	if a.Scale != Linear {
		lg := math.Log10
		if a.Scale == Log2 {
			lg = math.Log2
		}
		lo, hi := lg(a.Min), lg(a.Max)
		if hi == lo {
			return 0
		}
		return (lg(math.Max(v, a.Min)) - lo) / (hi - lo) * length
	}
	if a.Max == a.Min {
		return 0
	}
	return (v - a.Min) / (a.Max - a.Min) * length
}

// TickValues returns Ticks if set; otherwise the powers of the base within
// [Min, Max] on a log axis, and about five round values on a linear one.
func (a Axis) TickValues() []float64 {
	if a.Ticks != nil {
		return a.Ticks
	}
	if a.Scale != Linear {
		base, lg := 10.0, math.Log10
		if a.Scale == Log2 {
			base, lg = 2, math.Log2
		}
		var t []float64
		for p := math.Pow(base, math.Floor(lg(a.Min))); p <= a.Max*1.0001; p *= base {
			if p >= a.Min*0.9999 {
				t = append(t, p)
			}
		}
		if len(t) < 2 {
			t = []float64{a.Min, a.Max}
		}
		return t
	}
	span := a.Max - a.Min
	if span <= 0 {
		return []float64{a.Min}
	}
	step := Step(span, a.Binary)
	var t []float64
	for v := math.Ceil(a.Min/step) * step; v <= a.Max+step*1e-9; v += step {
		t = append(t, v)
	}
	return t
}

// Step returns the round tick step for a span: 1, 2, 2.5 or 5 times a power
// of ten, the smallest at least span/5. With binary, the power of ten is
// taken in the largest unit of 1024 the step reaches (so 300 MiB spans
// step by 50 MiB, not by 50,000,000 bytes).
func Step(span float64, binary bool) float64 {
	raw := span / 5
	unit := 1.0
	if binary {
		for raw/unit >= 1024 {
			unit *= 1024
		}
		raw /= unit
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw))) * unit
	raw *= unit
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return mag
}

// Cover returns 3 to 7 evenly spaced round values from at or below lo to at
// or above hi, for a y axis fitted to its data. An empty range (infinite
// bounds) covers [0, 1]; a single value is widened by one either way.
func Cover(lo, hi float64) []float64 {
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		lo, hi = 0, 1
	}
	if hi-lo < 1e-9 {
		lo, hi = lo-1, hi+1
	}
	step := Step(hi-lo, false)
	var ticks []float64
	for v := math.Floor(lo/step) * step; ; v += step {
		ticks = append(ticks, math.Round(v*1e9)/1e9) // no 0.30000000000000004
		if v >= hi-step*1e-9 && len(ticks) >= 2 {
			return ticks
		}
	}
}

// Trim spells v with at most two decimals and no trailing zeros: 2.50 → 2.5.
func Trim(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return s
}
