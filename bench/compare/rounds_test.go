package compare

import (
	"slices"
	"testing"

	"github.com/strata-cache/strata/bench/driver"
)

func TestRoundOrderAlternates(t *testing.T) {
	targets := []string{"a", "b", "c"}
	for r, want := range [][]string{{"a", "b", "c"}, {"c", "b", "a"}, {"a", "b", "c"}, {"c", "b", "a"}} {
		if got := roundOrder(targets, r); !slices.Equal(got, want) {
			t.Errorf("round %d: %v, want %v", r, got, want)
		}
	}
	if !slices.Equal(targets, []string{"a", "b", "c"}) {
		t.Errorf("roundOrder reordered its argument: %v", targets)
	}
}

// sample is one round's measurement: ops/s and proxy CPU s per million
// requests; cpu < 0 means the CPU time could not be read.
func sample(ops, cpu float64) Row {
	s := Row{Result: &driver.Result{OpsPerSec: ops}, ProxyCPUSeconds: ops / 1000, BackendCPUSeconds: ops / 2000}
	if cpu >= 0 {
		s.CPUMeasured, s.ProxyCPUPerM, s.BackendCPUPerM = true, cpu, 2*cpu
	}
	return s
}

func failedSample(err string) Row { return Row{Err: err} }

func TestSummarizeRounds(t *testing.T) {
	cases := []struct {
		name       string
		samples    []Row
		rounds     int
		resultOps  float64 // the round whose Result the row keeps; 0: none
		cpu        float64 // median proxy CPU per M
		measured   bool
		err        string
		roundsOps  []float64
		roundsCPUs []float64
	}{
		{
			name:    "odd count: the median round's result, each CPU figure its own median",
			samples: []Row{sample(100, 5), sample(300, 4), sample(200, 9)},
			rounds:  3, resultOps: 200, cpu: 5, measured: true,
			roundsOps: []float64{100, 300, 200}, roundsCPUs: []float64{5, 4, 9},
		},
		{
			name:    "even count: the lower middle round, the mean of the middle CPU figures",
			samples: []Row{sample(400, 6), sample(100, 2), sample(300, 3), sample(200, 8)},
			rounds:  4, resultOps: 200, cpu: 4.5, measured: true,
			roundsOps: []float64{400, 100, 300, 200}, roundsCPUs: []float64{6, 2, 3, 8},
		},
		{
			name:    "a failed round counts for nothing but its error",
			samples: []Row{sample(100, 5), failedSample("exited"), sample(300, 7)},
			rounds:  2, resultOps: 100, cpu: 6, measured: true, err: "exited",
			roundsOps: []float64{100, 300}, roundsCPUs: []float64{5, 7},
		},
		{
			name:    "a round without CPU time still counts for ops/s",
			samples: []Row{sample(100, 5), sample(300, -1), sample(200, 9)},
			rounds:  3, resultOps: 200, cpu: 7, measured: true,
			roundsOps: []float64{100, 300, 200}, roundsCPUs: []float64{5, 0, 9},
		},
		{
			name:    "every round failed",
			samples: []Row{failedSample("no port"), failedSample("later")},
			err:     "no port",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row := summarizeRounds("x", 16, c.samples)
			if row.Target != "x" || row.Pipeline != 16 || row.Rounds != c.rounds || row.Err != c.err {
				t.Fatalf("row %+v: want rounds %d, error %q", row, c.rounds, c.err)
			}
			if c.resultOps == 0 {
				if row.Result != nil || row.CPUMeasured {
					t.Fatalf("row without a good round has a result: %+v", row)
				}
				return
			}
			if row.Result == nil || row.Result.OpsPerSec != c.resultOps {
				t.Fatalf("result %+v, want the round of %v ops/s", row.Result, c.resultOps)
			}
			if row.ProxyCPUSeconds != c.resultOps/1000 || row.BackendCPUSeconds != c.resultOps/2000 {
				t.Errorf("CPU seconds %v, %v: not the median round's", row.ProxyCPUSeconds, row.BackendCPUSeconds)
			}
			if row.ProxyCPUPerM != c.cpu || row.BackendCPUPerM != 2*c.cpu || row.CPUMeasured != c.measured {
				t.Errorf("CPU per M %v/%v (measured %v), want %v/%v", row.ProxyCPUPerM, row.BackendCPUPerM, row.CPUMeasured, c.cpu, 2*c.cpu)
			}
			if !slices.Equal(row.RoundOps, c.roundsOps) || !slices.Equal(row.RoundCPUPerM, c.roundsCPUs) {
				t.Errorf("per round %v %v, want %v %v", row.RoundOps, row.RoundCPUPerM, c.roundsOps, c.roundsCPUs)
			}
		})
	}
}

// Ratios pair the rounds: the median of the ratios within each round, not
// the ratio of the medians, which a drift between rounds would skew.
func TestRatiosPairRounds(t *testing.T) {
	rounds := func(rows ...Row) []Row { return rows }
	samples := map[string]map[int][]Row{
		TargetMemcached: {1: rounds(sample(100, 4), sample(200, 4), sample(300, 4))},
		TargetTwemproxy: {1: rounds(sample(50, 10), sample(60, 20), sample(70, 30))},
		// Round 2's ops/s ratio to memcached: 0.9 (×1.1 in round 1, ×1.3 in
		// round 3), so the paired median is 1.1 where the medians' ratio
		// would be 180/200 = 0.9. CPU against twemproxy: 0.8, 1.25, 0.8.
		TargetStrataSingle: {1: rounds(sample(110, 8), sample(180, 25), sample(390, 24))},
		// Round 2 failed and round 3 has no CPU time: the CPU ratio to
		// single-tier comes from round 1 alone (12/8), ops/s from rounds 1
		// and 3 (0.5 and 1.2 against memcached).
		TargetStrataLayered: {1: rounds(sample(50, 12), failedSample("lost"), sample(360, -1))},
	}
	rep := &Report{}
	for _, target := range []string{TargetMemcached, TargetTwemproxy, TargetStrataSingle, TargetStrataLayered} {
		rep.Rows = append(rep.Rows, summarizeRounds(target, 1, samples[target][1]))
	}
	rep.fillRatios(samples)
	type ratios struct{ mc, tw, cpuMC, cpuTW, cpuSingle float64 }
	// Each ratio is the median of the per-round ratios, spelled out.
	want := map[string]ratios{}
	want[TargetMemcached] = ratios{1, pairedMedian(100.0/50, 200.0/60, 300.0/70), 1, pairedMedian(0.4, 0.2, 4.0/30), pairedMedian(0.5, 0.16, 4.0/24)}
	want[TargetTwemproxy] = ratios{pairedMedian(0.5, 0.3, 70.0/300), 1, pairedMedian(2.5, 5, 7.5), 1, pairedMedian(1.25, 0.8, 1.25)}
	want[TargetStrataSingle] = ratios{1.1, pairedMedian(110.0/50, 3, 390.0/70), pairedMedian(2, 6.25, 6), 0.8, 1}
	want[TargetStrataLayered] = ratios{pairedMedian(0.5, 1.2), pairedMedian(1, 360.0/70), 3, 1.2, 1.5}
	for _, row := range rep.Rows {
		w := want[row.Target]
		got := ratios{row.VsMemcached, row.VsTwemproxy, row.CPUVsMemcached, row.CPUVsTwemproxy, row.CPUVsSingle}
		if !near(got.mc, w.mc) || !near(got.tw, w.tw) || !near(got.cpuMC, w.cpuMC) || !near(got.cpuTW, w.cpuTW) || !near(got.cpuSingle, w.cpuSingle) {
			t.Errorf("%s: ratios %+v, want %+v", row.Target, got, w)
		}
	}
	// A yardstick not measured gives no ratio.
	delete(samples, TargetTwemproxy)
	rep.fillRatios(samples)
	if r := rep.Rows[2]; r.VsTwemproxy != 0 || r.CPUVsTwemproxy != 0 {
		t.Errorf("ratios to an unmeasured twemproxy: %v, %v", r.VsTwemproxy, r.CPUVsTwemproxy)
	}
}

func pairedMedian(xs ...float64) float64 { return median(xs) }

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
