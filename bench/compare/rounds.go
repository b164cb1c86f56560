package compare

import (
	"cmp"
	"slices"
)

// roundOrder is the order targets are measured in round r: as given in
// even rounds, reversed in odd ones. On a shared machine the position in a
// round matters (a target measured right after another's processes stopped
// finds caches and run queues in another state, and the machine's load
// drifts over a round); alternating the direction spreads that over every
// target alike instead of always favouring the same one.
func roundOrder(targets []string, r int) []string {
	order := slices.Clone(targets)
	if r%2 == 1 {
		slices.Reverse(order)
	}
	return order
}

// usableOps reports a sample's ops/s, if it was measured without error.
func usableOps(s Row) (float64, bool) {
	if s.Result == nil || s.Err != "" {
		return 0, false
	}
	return s.Result.OpsPerSec, true
}

// usableCPU reports a sample's CPU seconds per million requests, if it was
// measured without error.
func usableCPU(s Row) (float64, bool) {
	if _, ok := usableOps(s); !ok || !s.CPUMeasured || s.ProxyCPUPerM <= 0 {
		return 0, false
	}
	return s.ProxyCPUPerM, true
}

// pairedRatio is the median, over the rounds both were measured in, of
// fig(a)/fig(b) within a round. Pairing the rounds first keeps a drift in
// the machine's load between rounds out of the ratio; 0 when no round has
// both.
func pairedRatio(a, b []Row, fig func(Row) (float64, bool)) float64 {
	var rs []float64
	for r := 0; r < len(a) && r < len(b); r++ {
		x, okx := fig(a[r])
		y, oky := fig(b[r])
		if okx && oky && y > 0 {
			rs = append(rs, x/y)
		}
	}
	return median(rs)
}

// summarizeRounds folds one target's samples at one depth (index = round;
// a sample without a Result is a round it was not measured in) into its
// row: Result and the CPU seconds are those of the round whose ops/s is
// the median (the lower of the middle two for an even count), the figures
// per million requests are each their own median, and Err is the first
// round's error.
func summarizeRounds(target string, depth int, samples []Row) Row {
	row := Row{Target: target, Pipeline: depth}
	var good []Row
	for _, s := range samples {
		if row.Err == "" && s.Err != "" {
			row.Err = s.Err
		}
		if s.Result != nil {
			good = append(good, s)
			row.RoundOps = append(row.RoundOps, s.Result.OpsPerSec)
			row.RoundCPUPerM = append(row.RoundCPUPerM, s.ProxyCPUPerM)
		}
	}
	row.Rounds = len(good)
	if len(good) == 0 {
		return row
	}
	byOps := slices.Clone(good)
	slices.SortStableFunc(byOps, func(x, y Row) int { return cmp.Compare(x.Result.OpsPerSec, y.Result.OpsPerSec) })
	mid := byOps[(len(byOps)-1)/2]
	row.Result = mid.Result
	row.ProxyCPUSeconds, row.BackendCPUSeconds = mid.ProxyCPUSeconds, mid.BackendCPUSeconds
	var proxy, backend []float64
	for _, s := range good {
		if s.CPUMeasured {
			proxy = append(proxy, s.ProxyCPUPerM)
			backend = append(backend, s.BackendCPUPerM)
		}
	}
	row.CPUMeasured = len(proxy) > 0
	row.ProxyCPUPerM, row.BackendCPUPerM = median(proxy), median(backend)
	return row
}

// fillRatios sets each row's ratios to the yardsticks at the same depth
// (memcached, twemproxy and strata-single), each the median of the ratios
// within a round. samples[target][depth] are the rows' samples by round.
func (r *Report) fillRatios(samples map[string]map[int][]Row) {
	for i := range r.Rows {
		row := &r.Rows[i]
		own := samples[row.Target][row.Pipeline]
		mc := samples[TargetMemcached][row.Pipeline]
		tw := samples[TargetTwemproxy][row.Pipeline]
		single := samples[TargetStrataSingle][row.Pipeline]
		row.VsMemcached = pairedRatio(own, mc, usableOps)
		row.VsTwemproxy = pairedRatio(own, tw, usableOps)
		row.CPUVsMemcached = pairedRatio(own, mc, usableCPU)
		row.CPUVsTwemproxy = pairedRatio(own, tw, usableCPU)
		row.CPUVsSingle = pairedRatio(own, single, usableCPU)
	}
}
