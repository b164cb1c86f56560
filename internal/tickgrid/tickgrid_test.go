package tickgrid

import (
	"testing"
	"time"
)

func TestUntilTheNextMultiple(t *testing.T) {
	ms := time.Millisecond
	for _, c := range []struct {
		since, period, want time.Duration
	}{
		{0, 125 * ms, 125 * ms},               // on a multiple: a whole period, never 0
		{1 * ms, 125 * ms, 124 * ms},          // just after one
		{124 * ms, 125 * ms, 1 * ms},          // just before the next
		{1000 * ms, 125 * ms, 125 * ms},       // 1s is the 8th multiple of 125ms…
		{1000 * ms, time.Second, time.Second}, // …and the 1st of 1s: both fire then
		{1001 * ms, time.Second, 999 * ms},
		{-1 * ms, 125 * ms, 1 * ms}, // before the origin, still on the grid
		{5 * ms, 0, 0},
	} {
		if got := until(c.since, c.period); got != c.want {
			t.Errorf("until(%v, %v) = %v, want %v", c.since, c.period, got, c.want)
		}
	}
}

// Timers of different periods on the grid fire at the same instants: the
// deadlines of a 1s and a 125ms ticker started at unrelated moments meet
// at every whole second since the origin.
func TestPeriodsShareTheirDeadlines(t *testing.T) {
	ms := time.Millisecond
	deadlines := func(start, period time.Duration, n int) map[time.Duration]bool {
		out := map[time.Duration]bool{}
		at := start
		for range n {
			at += until(at, period)
			out[at] = true
		}
		return out
	}
	fast := deadlines(37*ms, 125*ms, 40)
	for at := range deadlines(611*ms, time.Second, 4) {
		if !fast[at] {
			t.Errorf("the 1s deadline %v is not a 125ms one", at)
		}
	}
}

// A ticker re-arms itself after every tick, never ticks before a grid
// instant, and once stopped ticks no more.
func TestTickerTicksAgainAndStops(t *testing.T) {
	const period = 20 * time.Millisecond
	tk := NewTicker(period)
	for range 3 {
		start := time.Now()
		due := start.Add(Until(start, period))
		select {
		case at := <-tk.C:
			// A tick taken late may have waited in C since an earlier
			// instant; one taken on time is not early.
			if at.Before(start.Add(-period)) || (at.After(start) && at.Before(due)) {
				t.Fatalf("tick at %v, the grid instant was %v", at.Sub(start), due.Sub(start))
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no tick within 10s")
		}
	}
	tk.Stop()
	select { // Stop waited for the goroutine: at most a tick already in C
	case <-tk.C:
	default:
	}
	tk.Stop() // idempotent
	select {
	case <-tk.C:
		t.Fatal("a tick after Stop returned")
	default:
	}
}
