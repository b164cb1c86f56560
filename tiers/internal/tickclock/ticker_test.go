package tickclock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

// The ticker sleeps after a round with nothing to time, the clock stands
// still while it sleeps, and a Wake starts it ticking again.
func TestTickerSleepsUntilWoken(t *testing.T) {
	c := New(time.Now(), time.Second)
	tk := NewTicker(c, time.Millisecond)
	var timing atomic.Bool
	var rounds atomic.Int64
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); tk.Run(ctx, func() bool { rounds.Add(1); return timing.Load() }) }()
	defer func() { cancel(); <-done }()

	poll.Until(t, 5*time.Second, "the ticker to sleep", tk.Asleep)
	c0, r0 := c.Load(), rounds.Load()
	time.Sleep(20 * time.Millisecond) // the time that must not count
	if c.Load() != c0 || rounds.Load() != r0 || !tk.Asleep() {
		t.Fatalf("asleep, yet the clock moved %d → %d and rounds ran %d → %d", c0, c.Load(), r0, rounds.Load())
	}
	timing.Store(true)
	woken := time.Now()
	tk.Wake()
	tk.Wake() // a second wake while one is pending does not block
	poll.Until(t, 5*time.Second, "rounds after the wake", func() bool { return rounds.Load() > r0+3 })
	moved, wall := c.Load()-c0, time.Since(woken)
	if moved > wall.Milliseconds()+1 {
		t.Errorf("the clock moved %d ms in the %v since the wake: the sleep was counted", moved, wall)
	}
	timing.Store(false)
	poll.Until(t, 5*time.Second, "the ticker to sleep again", tk.Asleep)
}
