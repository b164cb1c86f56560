package tickclock

import (
	"testing"
	"time"
)

func TestTicksAdvanceByElapsedTimeUpToTheBound(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(t0, 500*time.Millisecond)
	at := t0
	step := func(d time.Duration, want int64) {
		t.Helper()
		at = at.Add(d)
		c.Tick(at)
		if got := c.Load(); got != want {
			t.Fatalf("after +%v: clock %d ms, want %d", d, got, want)
		}
	}
	step(100*time.Millisecond, 100)
	step(100*time.Millisecond, 200)
	step(10*time.Second, 700)        // a stop of the process counts as the bound only
	step(499*time.Millisecond, 1199) // below the bound: exact
	step(300*time.Microsecond, 1199) // fractions of a millisecond carry over…
	step(700*time.Microsecond, 1200) // …and add up
	step(-time.Second, 1200)         // a time before the last tick: no step back
	step(time.Second+1500*time.Microsecond, 1700)
}

// After a Resume the time since the previous Tick does not count, even
// beyond the bound; the ticks after it count as usual.
func TestResumeDoesNotCountTheSleep(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := New(t0, 500*time.Millisecond)
	c.Tick(t0.Add(100*time.Millisecond + 600*time.Microsecond))
	c.Resume(t0.Add(time.Hour))
	if got := c.Load(); got != 100 {
		t.Fatalf("after the resume: %d ms, want 100", got)
	}
	c.Tick(t0.Add(time.Hour + 20*time.Millisecond))
	if got := c.Load(); got != 120 {
		t.Fatalf("a tick after the resume: %d ms, want 120 (the carry is dropped)", got)
	}
}

func TestBackingOff(t *testing.T) {
	for _, c := range []struct {
		in           bool
		retryAt, now int64
		want         bool
	}{
		{false, 100, 50, false}, // not in backoff
		{true, 100, 50, true},   // a backoff running on the clock keeps it ticking
		{true, 100, 100, false}, // over: the next request dials
		{true, 100, 150, false},
	} {
		if got := BackingOff(c.in, c.retryAt, c.now); got != c.want {
			t.Errorf("BackingOff(%v, %d, %d) = %v", c.in, c.retryAt, c.now, got)
		}
	}
}
