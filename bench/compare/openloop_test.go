package compare

import (
	"context"
	"math"
	"testing"
	"time"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{9, 1, 5}, 5},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestOpenLoopAndIdleConns(t *testing.T) {
	needNutcracker(t)
	rep, err := Run(context.Background(), Config{
		Workload: testWorkload(t), Targets: []string{TargetMemcached, TargetTwemproxy},
		Duration: 300 * time.Millisecond, Conns: 4, Pipelines: []int{1}, MemcachedMB: 64,
		IdleConns: 200, OpenLoad: []float64{0.2, 0.5}, OpenRounds: 2,
	}, time.Unix(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.IdleConns) != 2 {
		t.Fatalf("%d idle-connection rows, want one per target", len(rep.IdleConns))
	}
	for _, c := range rep.IdleConns {
		if c.Err != "" || c.Conns != 200 || c.RSSBefore <= 0 || c.RSSAfter <= 0 {
			t.Errorf("idle connections: %+v", c)
		}
	}
	want := math.Min(rep.Rows[0].Result.OpsPerSec, rep.Rows[1].Result.OpsPerSec)
	if rep.Capacity != want {
		t.Fatalf("capacity %v, want the slower target's %v", rep.Capacity, want)
	}
	if len(rep.Open) != 4 {
		t.Fatalf("%d open-loop rows, want 2 targets × 2 fractions", len(rep.Open))
	}
	base := map[float64]OpenRow{}
	for _, o := range rep.Open {
		if o.Err != "" || o.Rounds != 2 || o.P99 <= 0 || o.P999 < o.P99 || o.OpsPerSec <= 0 {
			t.Fatalf("open row %+v", o)
		}
		if o.Rate != o.Fraction*rep.Capacity {
			t.Errorf("%s at %v: rate %v, want %v", o.Target, o.Fraction, o.Rate, o.Fraction*rep.Capacity)
		}
		if o.Target == TargetMemcached {
			base[o.Fraction] = o
		}
	}
	// With two rounds the median of the rounds' differences is the
	// difference of the medians (means of two), up to rounding.
	for _, o := range rep.Open {
		if want := o.P99 - base[o.Fraction].P99; o.Target == TargetTwemproxy && math.Abs(o.AddedP99-want) > 1e-6 {
			t.Errorf("twemproxy at %v: added p99 %v, want %v", o.Fraction, o.AddedP99, want)
		}
	}
}

// The added latency is the median of each round's difference with direct
// memcached in the same round, not the difference of the two medians:
// here the machine was slow in round 1 for both, and the proxy added
// 100 µs at p99 in every round it shares with memcached, which the
// difference of the medians (3,500 against 1,800) would read as 1,700. A
// round memcached missed is left out.
func TestAddedIsTheMedianOfEachRoundsDifference(t *testing.T) {
	row := func(target string, rounds []int, p99s ...float64) OpenRow {
		o := OpenRow{Target: target, Fraction: 0.5, rounds: rounds}
		for _, p := range p99s {
			o.samples = append(o.samples, [5]float64{1000, p / 2, p, 2 * p, 0})
		}
		o.summarize()
		return o
	}
	rows := []OpenRow{
		row(TargetMemcached, []int{0, 1, 2}, 1000, 5000, 1800),
		row(TargetStrataSingle, []int{0, 1, 2, 3}, 1100, 5100, 1900, 9999),
		row(TargetTwemproxy, []int{3}, 1200),
	}
	fillAdded(rows)
	s, tw := rows[1], rows[2]
	if !s.based || s.AddedP99 != 100 || s.AddedP50 != 50 || s.AddedP999 != 200 {
		t.Fatalf("single-tier added p50/p99/p999 %v/%v/%v (based %v), want 50/100/200", s.AddedP50, s.AddedP99, s.AddedP999, s.based)
	}
	if tw.based || tw.AddedP99 != 0 {
		t.Fatalf("twemproxy, with no round shared with memcached: added %v, based %v", tw.AddedP99, tw.based)
	}
}
