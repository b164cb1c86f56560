package compare

import (
	"context"
	"fmt"
	"slices"

	"github.com/strata-cache/strata/bench/driver"
	"github.com/strata-cache/strata/bench/proc"
)

// OpenRow is one target driven open loop at one fraction of the capacity,
// over Config.OpenRounds rounds: each figure is the median of the rounds.
// Latency runs from each request's scheduled send time, so a proxy that
// stalls is charged for every request it delayed.
type OpenRow struct {
	Target   string  `json:"target"`
	Fraction float64 `json:"fraction"`
	Rate     float64 `json:"rate"`
	Rounds   int     `json:"rounds"`
	// OpsPerSec and the latencies (µs) are medians over the rounds.
	OpsPerSec float64 `json:"ops_per_sec"`
	P50       float64 `json:"p50_us"`
	P99       float64 `json:"p99_us"`
	P999      float64 `json:"p999_us"`
	// AddedP50, AddedP99 and AddedP999 are what this target added to
	// direct memcached's latency at the same rate: the median over the
	// rounds of this target's figure minus memcached's in the same round,
	// as the closed loop's ratios are medians of each round's ratio, so a
	// drift of the machine between rounds falls on both sides of each
	// difference. 0 for memcached itself or when no round has both.
	AddedP50  float64 `json:"added_p50_us"`
	AddedP99  float64 `json:"added_p99_us"`
	AddedP999 float64 `json:"added_p999_us"`
	// SendLagP99 is how late the generator itself sent (p99, µs, median
	// over the rounds): the part of every target's latency that is the
	// machine's and the generator's, not the target's.
	SendLagP99 float64 `json:"send_lag_p99_us"`
	// LoadAvg is the machine's one-minute load average at the start of
	// each round, the median over the rounds.
	LoadAvg float64 `json:"loadavg"`
	Errors  int64   `json:"errors"`
	Err     string  `json:"error,omitempty"`

	samples [][5]float64 // per round measured: ops/s, p50, p99, p999, send lag p99
	rounds  []int        // the round each sample is from
	loads   []float64
	based   bool // the Added figures were set: memcached was measured at this fraction
}

// openBatch is the most requests a connection writes together in open
// loop, which happens only when it has fallen behind its schedule.
const openBatch = 16

// capacity is the ops/s of the slowest target at the first depth measured
// closed loop, the rate the open-loop fractions refer to; 0 when none was
// measured.
func (r *Report) capacity(depth int) float64 {
	var c float64
	for _, row := range r.Rows {
		if row.Pipeline != depth || row.Result == nil || row.Err != "" {
			continue
		}
		if c == 0 || row.Result.OpsPerSec < c {
			c = row.Result.OpsPerSec
		}
	}
	return c
}

// runOpen drives every target open loop at each fraction of capacity,
// cfg.OpenRounds times. Rounds are interleaved (every target once, then
// every target again, see roundOrder) so a neighbour's burst on a shared
// machine lands on one round of each rather than on all rounds of one
// target.
func runOpen(ctx context.Context, cfg *Config, l *launcher, capacity float64) ([]OpenRow, bool) {
	var rows []OpenRow
	idx := map[string]int{}
	for _, target := range cfg.Targets {
		for _, f := range cfg.OpenLoad {
			idx[fmt.Sprint(target, f)] = len(rows)
			rows = append(rows, OpenRow{Target: target, Fraction: f, Rate: f * capacity})
		}
	}
	failed := false
	for round := 0; round < cfg.OpenRounds && ctx.Err() == nil; round++ {
		for _, target := range roundOrder(cfg.Targets, round) {
			topo, err := l.setup(ctx, target)
			if err != nil {
				failed = true
				for _, f := range cfg.OpenLoad {
					rows[idx[fmt.Sprint(target, f)]].Err = err.Error()
				}
				continue
			}
			for _, f := range cfg.OpenLoad {
				if ctx.Err() != nil {
					break
				}
				row := &rows[idx[fmt.Sprint(target, f)]]
				fmt.Fprintf(cfg.Log, "round %d: %s open loop at %.0f/s (%.0f %% of %.0f) for %v\n",
					round+1, target, row.Rate, 100*f, capacity, cfg.Duration)
				load, _ := proc.LoadAvg()
				res, err := driver.Run(ctx, driver.Config{
					Target: topo.addr, Workload: cfg.Workload, Conns: cfg.Conns, Pipeline: openBatch,
					Rate: row.Rate, Duration: cfg.Duration, Progress: cfg.Progress,
				})
				if err != nil {
					failed = true
					row.Err = err.Error()
					continue
				}
				row.Errors += res.Errors
				if res.Errors > 0 && row.Err == "" {
					failed = true
					row.Err = fmt.Sprintf("%d errors (first: %s)", res.Errors, res.FirstErr)
				}
				lag := 0.0
				if res.SendLag != nil {
					lag = res.SendLag.P99
				}
				row.samples = append(row.samples, [5]float64{res.OpsPerSec, res.Latency.P50, res.Latency.P99, res.Latency.P999, lag})
				row.rounds = append(row.rounds, round)
				row.loads = append(row.loads, load)
			}
			topo.stop()
		}
	}
	for i := range rows {
		rows[i].summarize()
	}
	fillAdded(rows)
	return rows, failed
}

// summarize sets the row's figures to the medians of its rounds.
func (o *OpenRow) summarize() {
	o.Rounds = len(o.samples)
	if o.Rounds == 0 {
		return
	}
	col := func(i int) float64 {
		xs := make([]float64, 0, len(o.samples))
		for _, s := range o.samples {
			xs = append(xs, s[i])
		}
		return median(xs)
	}
	o.OpsPerSec, o.P50, o.P99, o.P999, o.SendLagP99 = col(0), col(1), col(2), col(3), col(4)
	o.LoadAvg = median(append([]float64(nil), o.loads...))
}

// fillAdded sets each row's latency added over direct memcached at the
// same fraction, from the rounds both were measured in.
func fillAdded(rows []OpenRow) {
	base := map[float64]*OpenRow{}
	for i := range rows {
		if rows[i].Target == TargetMemcached && rows[i].Rounds > 0 {
			base[rows[i].Fraction] = &rows[i]
		}
	}
	for i := range rows {
		r := &rows[i]
		b := base[r.Fraction]
		if b == nil || r.Target == TargetMemcached || r.Rounds == 0 {
			continue
		}
		var d50, d99, d999 []float64
		for k, round := range r.rounds {
			j := slices.Index(b.rounds, round)
			if j < 0 {
				continue // memcached failed that round
			}
			s, bs := r.samples[k], b.samples[j]
			d50, d99, d999 = append(d50, s[1]-bs[1]), append(d99, s[2]-bs[2]), append(d999, s[3]-bs[3])
		}
		if len(d99) == 0 {
			continue
		}
		r.AddedP50, r.AddedP99, r.AddedP999 = median(d50), median(d99), median(d999)
		r.based = true
	}
}

// median of xs (reordered); the mean of the middle two for an even count.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
