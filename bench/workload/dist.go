package workload

import (
	"fmt"
	"math"
	"sort"
)

// Dist is a distribution of non-negative integers (key sizes, value sizes,
// TTL seconds) as a profile spells it:
//
//	{ dist = "fixed", value = 100 }
//	{ dist = "uniform", min = 10, max = 200 }
//	{ dist = "normal", mean = 300, stddev = 80, min = 1, max = 4096 }
//	{ dist = "lognormal", median = 230, sigma = 1.1, min = 1, max = 65536 }
//	{ dist = "empirical", table = [[64, 0.5], [512, 0.4], [4096, 0.1]] }
//
// normal and lognormal are clamped into [min, max] (max 0 means no upper
// bound); an empirical table lists (value, weight) pairs and draws each value
// with probability weight ÷ Σ weights.
type Dist struct {
	Kind   string      `toml:"dist" json:"dist"`
	Value  float64     `toml:"value" json:"value,omitempty"`
	Min    float64     `toml:"min" json:"min,omitempty"`
	Max    float64     `toml:"max" json:"max,omitempty"`
	Mean   float64     `toml:"mean" json:"mean,omitempty"`
	StdDev float64     `toml:"stddev" json:"stddev,omitempty"`
	Median float64     `toml:"median" json:"median,omitempty"`
	Sigma  float64     `toml:"sigma" json:"sigma,omitempty"`
	Table  [][]float64 `toml:"table" json:"table,omitempty"`

	// cum is the cumulative weight of Table, normalised to end at 1; filled
	// by validate.
	cum []float64
}

// Fixed is the distribution that always yields v.
func Fixed(v int) Dist { return Dist{Kind: "fixed", Value: float64(v)} }

// Uniform yields integers in [lo, hi] with equal probability.
func Uniform(lo, hi int) Dist { return Dist{Kind: "uniform", Min: float64(lo), Max: float64(hi)} }

// Lognormal yields exp(N(ln median, sigma²)) clamped into [lo, hi].
func Lognormal(median, sigma float64, lo, hi int) Dist {
	return Dist{Kind: "lognormal", Median: median, Sigma: sigma, Min: float64(lo), Max: float64(hi)}
}

// Empirical draws values from a table of (value, weight) pairs.
func Empirical(pairs ...[2]float64) Dist {
	d := Dist{Kind: "empirical"}
	for _, p := range pairs {
		d.Table = append(d.Table, []float64{p[0], p[1]})
	}
	return d
}

// validate checks the parameters and precomputes the table. It returns an
// error naming the offending field (relative to the Dist) so the caller can
// point at the profile line.
func (d *Dist) validate() (field string, err error) {
	switch d.Kind {
	case "", "fixed":
		d.Kind = "fixed"
		if d.Value < 0 {
			return "value", fmt.Errorf("value %v must not be negative", d.Value)
		}
	case "uniform":
		if d.Min < 0 || d.Max < d.Min {
			return "max", fmt.Errorf("uniform needs 0 <= min <= max, have min %v max %v", d.Min, d.Max)
		}
	case "normal":
		if d.StdDev < 0 {
			return "stddev", fmt.Errorf("stddev %v must not be negative", d.StdDev)
		}
		return d.validateClamp()
	case "lognormal":
		if d.Median <= 0 {
			return "median", fmt.Errorf("lognormal median %v must be positive", d.Median)
		}
		if d.Sigma < 0 {
			return "sigma", fmt.Errorf("sigma %v must not be negative", d.Sigma)
		}
		return d.validateClamp()
	case "empirical":
		if len(d.Table) == 0 {
			return "table", fmt.Errorf("empirical needs a table of [value, weight] pairs")
		}
		d.cum = make([]float64, len(d.Table))
		var sum float64
		for i, row := range d.Table {
			if len(row) != 2 || row[0] < 0 || row[1] < 0 {
				return "table", fmt.Errorf("table row %d: want [value >= 0, weight >= 0], have %v", i+1, row)
			}
			sum += row[1]
			d.cum[i] = sum
		}
		if sum <= 0 {
			return "table", fmt.Errorf("table weights sum to zero")
		}
		for i := range d.cum {
			d.cum[i] /= sum
		}
		d.cum[len(d.cum)-1] = 1
	default:
		return "dist", fmt.Errorf("unknown distribution %q (want fixed, uniform, normal, lognormal or empirical)", d.Kind)
	}
	return "", nil
}

func (d *Dist) validateClamp() (string, error) {
	if d.Min < 0 {
		return "min", fmt.Errorf("min %v must not be negative", d.Min)
	}
	if d.Max != 0 && d.Max < d.Min {
		return "max", fmt.Errorf("max %v is below min %v", d.Max, d.Min)
	}
	return "", nil
}

// Quantile maps u ∈ [0, 1) to a value by inverting the distribution's CDF.
// Driving it with a hash of the key makes a key's size a pure function of the
// key, which is what a cache sees: one key, one size.
func (d *Dist) Quantile(u float64) int {
	var v float64
	switch d.Kind {
	case "fixed", "":
		return int(d.Value)
	case "uniform":
		lo, hi := math.Floor(d.Min), math.Floor(d.Max)
		return int(lo + math.Floor(u*(hi-lo+1)))
	case "normal":
		v = d.Mean + d.StdDev*normalQuantile(u)
	case "lognormal":
		v = d.Median * math.Exp(d.Sigma*normalQuantile(u))
	case "empirical":
		i := sort.SearchFloat64s(d.cum, u)
		if u == d.cum[min(i, len(d.cum)-1)] {
			i++ // SearchFloat64s finds cum[i] >= u; u on a boundary belongs to the next row
		}
		return int(d.Table[min(i, len(d.Table)-1)][0])
	}
	v = math.Round(v)
	if v < d.Min {
		v = d.Min
	}
	if d.Max > 0 && v > d.Max {
		v = d.Max
	}
	return int(v)
}

// Largest is the largest value the distribution can yield, or
// MaxValueSize when it has no upper bound.
func (d *Dist) Largest() int {
	switch d.Kind {
	case "fixed", "":
		return int(d.Value)
	case "uniform":
		return int(d.Max)
	case "empirical":
		m := 0.0
		for _, row := range d.Table {
			m = math.Max(m, row[0])
		}
		return int(m)
	}
	if d.Max > 0 {
		return int(d.Max)
	}
	return MaxValueSize
}

// Expected is the distribution's expected value (after clamping for normal and
// lognormal, computed numerically), used to size memory in reports.
func (d *Dist) Expected() float64 {
	switch d.Kind {
	case "fixed", "":
		return d.Value
	case "uniform":
		return (math.Floor(d.Min) + math.Floor(d.Max)) / 2
	case "empirical":
		var sum, w float64
		for _, row := range d.Table {
			sum += row[0] * row[1]
			w += row[1]
		}
		return sum / w
	}
	const steps = 4096
	var sum float64
	for i := 0; i < steps; i++ {
		sum += float64(d.Quantile((float64(i) + 0.5) / steps))
	}
	return sum / steps
}

// normalQuantile is the inverse CDF of the standard normal distribution.
func normalQuantile(u float64) float64 {
	// Clamp away from 0 and 1, where the quantile is infinite (and 0·∞
	// would turn a zero stddev into NaN).
	u = math.Min(math.Max(u, 1e-12), 1-1e-12)
	return math.Sqrt2 * math.Erfinv(2*u-1)
}
