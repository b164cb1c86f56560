package tickgrid

import (
	"sync"
	"time"
)

// origin is the grid's zero: the process's start, on the monotonic clock.
var origin = time.Now()

// Until is the wait from now to the next multiple of period since the
// grid's origin: in (0, period], never 0, so a ticker re-armed on the
// instant it fires waits a whole period. A period of 0 or less is 0.
func Until(now time.Time, period time.Duration) time.Duration {
	return until(now.Sub(origin), period)
}

// until is Until on a time given as the distance from the origin.
func until(sinceOrigin, period time.Duration) time.Duration {
	if period <= 0 {
		return 0
	}
	r := sinceOrigin % period
	if r < 0 {
		r += period // a time before the origin
	}
	return period - r
}

// Ticker delivers the time on C at every multiple of its period on the
// grid; like time.Ticker it drops ticks a slow reader does not take.
type Ticker struct {
	C <-chan time.Time

	c      chan time.Time
	period time.Duration

	mu      sync.Mutex // guards t and stopped
	t       *time.Timer
	stopped bool
}

// NewTicker starts a ticker of period, which must be positive.
func NewTicker(period time.Duration) *Ticker {
	if period <= 0 {
		panic("tickgrid: non-positive period")
	}
	c := make(chan time.Time, 1)
	tk := &Ticker{C: c, c: c, period: period}
	tk.mu.Lock()
	tk.t = time.AfterFunc(Until(time.Now(), period), tk.fire)
	tk.mu.Unlock()
	return tk
}

func (tk *Ticker) fire() {
	now := time.Now()
	select {
	case tk.c <- now:
	default: // the reader has not taken the last tick
	}
	tk.mu.Lock()
	if !tk.stopped {
		tk.t.Reset(Until(now, tk.period))
	}
	tk.mu.Unlock()
}

// Stop ends the ticks; it does not close C. Idempotent.
func (tk *Ticker) Stop() {
	tk.mu.Lock()
	tk.stopped = true
	tk.t.Stop()
	tk.mu.Unlock()
}
