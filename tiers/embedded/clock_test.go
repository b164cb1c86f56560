package embedded

import (
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

func TestClockFollowsWallClock(t *testing.T) {
	c := NewClock(time.Millisecond)
	defer c.Stop()
	start := time.Now().Unix()
	if got := c.Now(); got < start-1 || got > start+1 {
		t.Fatalf("clock reads %d, wall clock %d", got, start)
	}
	deadline := time.Now().Add(3 * time.Second)
	for c.Now() <= start && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond) // waiting for the wall clock's next second
	}
	if c.Now() <= start {
		t.Fatalf("clock did not advance past %d within 3s", start)
	}
	c.Stop()
	c.Stop() // idempotent
}

// A clock nobody reads stops ticking; the next Now reads the system clock
// itself and starts the ticker again, so it is never behind while asleep.
func TestClockSleepsUnreadAndWakesOnRead(t *testing.T) {
	c := NewClock(time.Millisecond)
	defer c.Stop()
	poll.Until(t, 5*time.Second, "the unread clock to fall asleep", func() bool { return c.state.Load() == clockAsleep })
	stale := c.now.Load()
	c.now.Store(stale - 100) // what a sleeping clock must not return
	if got, wall := c.Now(), time.Now().Unix(); got < wall-1 || got > wall {
		t.Fatalf("asleep clock read %d, wall clock %d", got, wall)
	}
	if s := c.state.Load(); s != clockTicking {
		t.Fatalf("state after a read while asleep: %d, want ticking", s)
	}
	if got := c.now.Load(); got < stale {
		t.Fatalf("woken clock stores %d, older than %d", got, stale)
	}
	// Read on every tick, it keeps ticking and follows the wall clock.
	start := time.Now().Unix()
	poll.Until(t, 3*time.Second, "the read clock to pass the next second", func() bool { return c.Now() > start })
	poll.Until(t, 5*time.Second, "the clock to sleep again once unread", func() bool { return c.state.Load() == clockAsleep })
}

// Concurrent readers of a sleeping clock wake it once and all read the
// wall clock.
func TestClockConcurrentWake(t *testing.T) {
	c := NewClock(time.Millisecond)
	defer c.Stop()
	for round := 0; round < 20; round++ {
		poll.Until(t, 5*time.Second, "the clock to fall asleep", func() bool { return c.state.Load() == clockAsleep })
		var wg sync.WaitGroup
		for i := 0; i < 4; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if got, wall := c.Now(), time.Now().Unix(); got < wall-1 || got > wall {
					t.Errorf("read %d, wall clock %d", got, wall)
				}
			}()
		}
		wg.Wait()
	}
}
