package tickclock

import (
	"context"
	"sync/atomic"
	"time"
)

// Ticker advances a Clock every period while something is timed on it,
// and sleeps while nothing is, so an idle process does not wake every
// tick. The clock stands still during the sleep, and the sleep does not
// count on it: a request stamped while the ticker slept ages from the
// wake, microseconds later, not from the moment the ticker went to sleep.
// The pool and the region-link client each own one, and their event loops
// wake it.
type Ticker struct {
	clock  *Clock
	period time.Duration
	// wake holds one pending wake: a loop that queues its first request
	// after a quiet round sends without blocking.
	wake   chan struct{}
	asleep atomic.Bool
}

// NewTicker returns a ticker of c every period; Run starts it.
func NewTicker(c *Clock, period time.Duration) *Ticker {
	return &Ticker{clock: c, period: period, wake: make(chan struct{}, 1)}
}

// Wake rouses a sleeping ticker, or keeps a running one from falling
// asleep after the round it is in; it never blocks.
func (t *Ticker) Wake() {
	select {
	case t.wake <- struct{}{}:
	default: // a wake is pending already
	}
}

// Asleep reports whether the ticker waits for a Wake (for tests).
func (t *Ticker) Asleep() bool { return t.asleep.Load() }

// Run ticks until ctx ends. Each tick advances the clock and runs round,
// which reports whether anything is still timed; when nothing is, the
// ticker sleeps until Wake. A loop that starts timing after round looked
// at it has sent a Wake, which the sleep takes at once.
func (t *Ticker) Run(ctx context.Context, round func() bool) {
	tk := time.NewTicker(t.period)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		t.clock.Tick(time.Now())
		if round() {
			continue
		}
		tk.Stop()
		t.asleep.Store(true)
		select {
		case <-ctx.Done():
			return
		case <-t.wake:
		}
		t.asleep.Store(false)
		t.clock.Resume(time.Now())
		tk.Reset(t.period)
	}
}
