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
	return period - (sinceOrigin - floor(sinceOrigin, period))
}

// floor is the newest multiple of period (positive) at or before
// sinceOrigin, also for a time before the origin.
func floor(sinceOrigin, period time.Duration) time.Duration {
	r := sinceOrigin % period
	if r < 0 {
		r += period // a time before the origin
	}
	return sinceOrigin - r
}

// Ticker delivers the time on C at every multiple of its period on the
// grid; like time.Ticker it drops ticks a slow reader does not take.
//
// Its goroutine waits on a Sleeper, so an idle process pays for a tick
// with the thread that runs that goroutine and the one its receiver is
// handed to, not with the runtime's monitor thread as well.
type Ticker struct {
	C <-chan time.Time

	sleep    *Sleeper
	done     chan struct{}
	stopOnce sync.Once
}

// NewTicker starts a ticker of period, which must be positive.
func NewTicker(period time.Duration) *Ticker {
	if period <= 0 {
		panic("tickgrid: non-positive period")
	}
	c := make(chan time.Time, 1)
	tk := &Ticker{C: c, sleep: NewSleeper(), done: make(chan struct{})}
	go tk.run(c, period)
	return tk
}

func (tk *Ticker) run(c chan<- time.Time, period time.Duration) {
	defer close(tk.done)
	for tk.sleep.Sleep(period) {
		select {
		case c <- time.Now():
		default: // the reader has not taken the last tick
		}
	}
}

// Stop ends the ticks and waits for the ticker's goroutine; it does not
// close C. Idempotent.
func (tk *Ticker) Stop() {
	tk.stopOnce.Do(func() {
		tk.sleep.Close()
		<-tk.done
	})
}
