package history

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestDeriveRatesAndCombinedHitRatio(t *testing.T) {
	a := Counters{L1Reads: 100, L1Hits: 50, L2Reads: 50, L2Hits: 10, Requests: 200, Conns: 3}
	// Over 2 s: 100 reads, 66 L1 hits, 34 L1 misses of which 27 hit L2
	// (the long-tail paper's 66 % + 34 % × 80 % shape, rounded to counts).
	b := Counters{L1Reads: 200, L1Hits: 116, L2Reads: 84, L2Hits: 37, Requests: 400, Errors: 4, Promotions: 6, Conns: 5}
	p := Derive(a, b, 2*time.Second)
	if p.HitL1 != 0.66 || p.HitL2 != 27.0/34 || p.HitCombined != 0.93 {
		t.Fatalf("hit ratios = %v %v %v, want 0.66 %v 0.93", p.HitL1, p.HitL2, p.HitCombined, 27.0/34)
	}
	if p.RPS != 100 || p.EPS != 2 || p.PPS != 3 || p.Conns != 5 {
		t.Fatalf("rates = rps %v eps %v pps %v conns %d", p.RPS, p.EPS, p.PPS, p.Conns)
	}
}

func TestDeriveWithoutL1OrReads(t *testing.T) {
	p := Derive(Counters{}, Counters{L2Reads: 4, L2Hits: 3}, time.Second)
	if p.HitL1 != -1 || p.HitCombined != 0.75 {
		t.Fatalf("no L1: hit_l1 %v combined %v, want -1 and 0.75", p.HitL1, p.HitCombined)
	}
	p = Derive(Counters{}, Counters{}, time.Second)
	if p.HitL1 != -1 || p.HitL2 != -1 || p.HitCombined != -1 {
		t.Fatalf("no reads: %v %v %v, want -1 everywhere", p.HitL1, p.HitL2, p.HitCombined)
	}
}

func TestCounterGoingBackwardsGivesZero(t *testing.T) {
	p := Derive(Counters{Requests: 10, L1Reads: 9}, Counters{Requests: 3, L1Reads: 2}, time.Second)
	if p.Requests != 0 || p.L1Reads != 0 || p.RPS != 0 {
		t.Fatalf("reset counters: %+v", p)
	}
}

func TestPercentileInterpolatesInsideTheBucket(t *testing.T) {
	bounds := []float64{1, 2, 4, 8}
	// 10 at ≤1, 10 more in (1,2], 80 more in (2,4], none above.
	cum := []uint64{10, 20, 100, 100}
	for _, c := range []struct {
		q, want float64
	}{
		{0.05, 0.5},   // rank 5 of the first bucket [0,1]
		{0.10, 1},     // the top of the first bucket
		{0.15, 1.5},   // half way through (1,2]
		{0.60, 3},     // rank 60: 40 of the 80 in (2,4]
		{0.99, 3.975}, // rank 99: 79 of 80
	} {
		if got := Percentile(bounds, cum, c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("q=%v: %v, want %v", c.q, got, c.want)
		}
	}
	if got := Percentile(bounds, []uint64{0, 0, 0, 0}, 0.5); got != 0 {
		t.Errorf("empty histogram: %v, want 0", got)
	}
}

func TestLatencyPercentilesComeFromTheInterval(t *testing.T) {
	bounds := []float64{0.001, 0.002}
	a := Counters{LatencyBounds: bounds, LatencyCounts: []uint64{1000, 1000}}
	// In the interval every request took (1 ms, 2 ms]: the old fast ones
	// must not pull the median down.
	b := Counters{LatencyBounds: bounds, LatencyCounts: []uint64{1000, 1100}}
	p := Derive(a, b, time.Second)
	if math.Abs(p.P50-1.5) > 1e-9 || math.Abs(p.P99-1.99) > 1e-9 {
		t.Fatalf("p50 %v p99 %v, want 1.5 and 1.99 ms", p.P50, p.P99)
	}
}

func TestHistoryKeepsTheStartAndFoldsOldPoints(t *testing.T) {
	h := New(Config{Fine: 4, Fold: 2, Coarse: 4})
	if _, ok := h.Last(); ok {
		t.Fatal("a new history has a point")
	}
	for i := 0; i <= 10; i++ {
		h.Add(t0.Add(time.Duration(i)*time.Second), Counters{Requests: uint64(i * i)})
	}
	// 10 fine points were made (seconds 1..10); the fine ring holds 7..10
	// and the coarse ring the last four folds, (3,4) (5,6) (7,8) (9,10), of
	// which only those ending by second 6 (the start of point 7) are shown.
	ps := h.Points()
	var got []int64
	for _, p := range ps {
		got = append(got, (p.T-t0.UnixMilli())/1000)
	}
	want := []int64{4, 6, 7, 8, 9, 10}
	if len(got) != len(want) {
		t.Fatalf("points end at %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("points end at %v, want %v", got, want)
		}
	}
	// The fold of seconds 3 and 4 holds requests 9-4 + 16-9 = 12 over 2 s.
	if ps[0].Requests != 12 || ps[0].Span != 2 || ps[0].RPS != 6 {
		t.Fatalf("fold: %+v", ps[0])
	}
	if last, _ := h.Last(); last.Requests != 19 {
		t.Fatalf("last point has %d requests, want 100-81", last.Requests)
	}
}

func TestAddIgnoresTimeThatDoesNotAdvance(t *testing.T) {
	h := New(Config{})
	h.Add(t0, Counters{})
	h.Add(t0, Counters{Requests: 5})
	h.Add(t0.Add(-time.Second), Counters{Requests: 5})
	if n := len(h.Points()); n != 0 {
		t.Fatalf("%d points from a clock that did not advance", n)
	}
}

func TestFoldTakesTheWorstPercentile(t *testing.T) {
	f := Fold([]Point{{T: 1, Span: 1, P99: 3, Conns: 2, L1Reads: 4, L1Hits: 4}, {T: 2, Span: 1, P99: 1, Conns: 7, L1Reads: 4}})
	if f.T != 2 || f.P99 != 3 || f.Conns != 7 || f.HitL1 != 0.5 {
		t.Fatalf("fold = %+v", f)
	}
}

// manualClock is a Clock a test ticks by hand.
type manualClock struct {
	period time.Duration
	f      func()
	starts int
	stops  int
}

func (c *manualClock) Every(period time.Duration, f func()) (stop func()) {
	c.period, c.f = period, f
	c.starts++
	return func() { c.f = nil; c.stops++ }
}

func (c *manualClock) tick() {
	if c.f != nil {
		c.f()
	}
}

func TestRecorderSamplesOnItsClockUntilStopped(t *testing.T) {
	var n uint64
	src := SourceFunc(func() Counters { n++; return Counters{Requests: 10 * n} })
	at := t0
	clock := &manualClock{}
	r := NewRecorder(src, Config{}, 0, clock, func() time.Time { return at })
	r.Start()
	r.Start() // once
	if n != 1 || clock.starts != 1 || clock.period != time.Second {
		t.Fatalf("after Start: %d reads, %d clock starts, period %v; want the baseline, 1, 1s", n, clock.starts, clock.period)
	}
	for range 3 {
		at = at.Add(time.Second)
		clock.tick()
	}
	pts := r.Points()
	if len(pts) != 3 || pts[2].T != t0.Add(3*time.Second).UnixMilli() || pts[2].Requests != 10 {
		t.Fatalf("points after three runs: %+v", pts)
	}
	r.Stop()
	r.Stop() // idempotent
	clock.tick()
	if clock.stops != 1 || n != 4 {
		t.Fatalf("%d clock stops, %d reads after Stop; want 1 and 4", clock.stops, n)
	}
}

func TestRecorderStopBeforeStart(t *testing.T) {
	clock := &manualClock{}
	r := NewRecorder(SourceFunc(func() Counters { return Counters{} }), Config{}, 0, clock, nil)
	r.Stop()
	r.Start() // does nothing after Stop
	r.Stop()
	if clock.starts != 0 || len(r.Points()) != 0 {
		t.Fatalf("%d clock starts, %d points after Stop then Start", clock.starts, len(r.Points()))
	}
}

func TestSinceAndTotal(t *testing.T) {
	h := New(Config{Fine: 3, Fold: 2, Coarse: 4})
	for i := 0; i <= 6; i++ {
		h.Add(t0.Add(time.Duration(i)*time.Second), Counters{Requests: uint64(10 * i)})
	}
	ms := func(s int) int64 { return t0.Add(time.Duration(s) * time.Second).UnixMilli() }
	if got := h.Since(ms(4)); len(got) != 2 || got[0].T != ms(5) || got[1].T != ms(6) {
		t.Fatalf("since 4 s: %+v", got)
	}
	if got := h.Since(ms(6)); len(got) != 0 {
		t.Fatalf("since the last point: %+v", got)
	}
	// Older than the fine ring: the coarse points that are shown, then
	// the fine ones.
	if got := h.Since(ms(1)); len(got) != 4 || got[0].T != ms(2) || got[0].Span != 2 {
		t.Fatalf("since 1 s: %+v", got)
	}
	// The total keeps what the rings dropped.
	if tot := h.Total(); tot.Requests != 60 || tot.Span != 6 || tot.T != ms(6) {
		t.Fatalf("total %+v", tot)
	}
}

func TestLocalitySeries(t *testing.T) {
	a := Counters{LocalityRequests: 100, LocalityRemote: 10, Migrations: 3, MigrationsInFlight: 1}
	b := Counters{LocalityRequests: 140, LocalityRemote: 20, Migrations: 5, MigrationsInFlight: 4}
	p := Derive(a, b, time.Second)
	if p.Routed != 40 || p.Remote != 10 || p.RemoteShare != 0.25 || p.Migrations != 2 || p.InFlight != 4 {
		t.Fatalf("locality point %+v", p)
	}
	// Without routed requests the share is "no data", not 0 %.
	if q := Derive(b, b, time.Second); q.RemoteShare != -1 || q.InFlight != 4 {
		t.Fatalf("idle point: share %v in flight %d", q.RemoteShare, q.InFlight)
	}
	// A fold adds the counts, recomputes the share and keeps the most in
	// flight.
	c := Counters{LocalityRequests: 200, LocalityRemote: 20, Migrations: 9, MigrationsInFlight: 0}
	f := Fold([]Point{p, Derive(b, c, time.Second)})
	if f.Routed != 100 || f.Remote != 10 || f.RemoteShare != 0.1 || f.Migrations != 6 || f.InFlight != 4 {
		t.Fatalf("fold %+v", f)
	}
}
