package tickgrid

import (
	"runtime"
	"testing"
	"time"
)

// sleepers returns one sleeper of each kind the platform has: the
// descriptor one where there is one, and always the runtime timer one.
func sleepers(t *testing.T) map[string]*Sleeper {
	t.Helper()
	out := map[string]*Sleeper{"runtime timer": {closed: make(chan struct{})}}
	if s := NewSleeper(); s.Polled() {
		out["poller"] = s
	} else if runtime.GOOS == "linux" {
		t.Error("no timerfd sleeper on Linux")
	}
	for _, s := range out {
		t.Cleanup(s.Close)
	}
	return out
}

// A sleep never returns before the grid instant it waits for, and a
// sleep with another period waits for that period's multiple.
func TestSleepReturnsAtTheGridInstant(t *testing.T) {
	for name, s := range sleepers(t) {
		t.Run(name, func(t *testing.T) {
			for _, p := range []time.Duration{20 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond} {
				sleepOnGrid(t, s, p)
			}
		})
	}
}

// sleepOnGrid sleeps s for period p and fails t if it returned before
// the grid instant.
func sleepOnGrid(t *testing.T, s *Sleeper, p time.Duration) {
	t.Helper()
	start := time.Now()
	due := start.Add(Until(start, p))
	if !s.Sleep(p) {
		t.Fatal("Sleep reported closed")
	}
	if now := time.Now(); now.Before(due) {
		t.Fatalf("Sleep(%v) returned %v before its grid instant", p, due.Sub(now))
	}
}

// SleepFor never returns before its time, and a grid sleep after it
// still waits for its grid instant (the one-shot did not leave the
// timer's interval armed, nor an instant already past).
func TestSleepForThenTheGrid(t *testing.T) {
	for name, s := range sleepers(t) {
		t.Run(name, func(t *testing.T) {
			for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond} {
				start := time.Now()
				if !s.SleepFor(d) {
					t.Fatal("SleepFor reported closed")
				}
				if got := time.Since(start); got < d {
					t.Fatalf("SleepFor(%v) returned after %v", d, got)
				}
				sleepOnGrid(t, s, 20*time.Millisecond)
			}
		})
	}
}

// Close wakes a sleep in progress, and every later sleep reports false.
func TestCloseWakesTheSleeper(t *testing.T) {
	for name, s := range sleepers(t) {
		t.Run(name, func(t *testing.T) {
			woke := make(chan bool)
			go func() { woke <- s.Sleep(time.Hour) }()
			s.Close()
			select {
			case ok := <-woke:
				if ok {
					t.Fatal("a closed sleeper's Sleep reported a tick")
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Close did not wake the Sleep within 10s")
			}
			if s.Sleep(time.Millisecond) {
				t.Fatal("Sleep after Close reported a tick")
			}
			s.Close() // idempotent
		})
	}
}
