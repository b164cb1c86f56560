package memcached

import (
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers"
)

func TestNeedsCheck(t *testing.T) {
	for _, c := range []struct{ waiting, allUp, want bool }{
		{false, true, false}, // quiet loop, healthy pool: left asleep
		{true, true, true},   // a request to time
		{false, false, true}, // a server to fence
		{true, false, true},
	} {
		if got := needsCheck(c.waiting, c.allUp); got != c.want {
			t.Errorf("needsCheck(%v, %v) = %v", c.waiting, c.allUp, got)
		}
	}
}

// Once its requests are answered and a check has seen the loop quiet, the
// ticker stops waking it and then sleeps itself, with the pool clock
// standing still; the next request arms the loop and wakes the ticker.
func TestTheTickerSleepsWhileEveryLoopIsQuiet(t *testing.T) {
	mc := memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, RequestTimeout: 500 * time.Millisecond}, 0)
	ls := h.pool.lstates[0]
	expect(t, "get absent", h.one(get("a")), tiers.StatusMiss, "")
	if !ls.waiting.Load() {
		t.Fatal("a request did not mark its loop as waiting")
	}
	h.loops.until(t, 10*time.Second, "a check finds the loop quiet", func() bool { return !ls.waiting.Load() })
	var c0 int64
	quiet := func() bool {
		poll.Until(t, 10*time.Second, "the ticker to sleep", h.pool.ticker.Asleep)
		h.loops.runPending()
		c0 = h.pool.clock.Load()
		// Asleep for longer than the clock's bounded step (half the
		// timeout): counted, the sleep would age the next request by that
		// much.
		slept := time.Now()
		poll.Until(t, 10*time.Second, "five ticks of wall time", func() bool { return time.Since(slept) > 5*h.pool.tick })
		return h.pool.ticker.Asleep() && h.pool.clock.Load() == c0
	}
	// The first request's wake, sent while the ticker was running, may
	// rouse its first sleep once (a wake is never dropped, so none is
	// lost); the second quiet spell must hold.
	held := quiet()
	if !held {
		held = quiet()
	}
	if !held {
		t.Fatal("the ticker woke or the clock moved with every loop quiet")
	}
	h.loops.mu.Lock()
	queued := len(h.loops.queue)
	h.loops.mu.Unlock()
	if queued != 0 {
		t.Fatalf("the ticker queued %d events on a quiet loop", queued)
	}
	start := time.Now()
	h.one(get("b"))
	if !ls.waiting.Load() {
		t.Fatal("the next request did not arm the loop again")
	}
	h.loops.until(t, 10*time.Second, "the woken ticker to check the loop", func() bool { return !ls.waiting.Load() })
	moved := time.Duration(h.pool.clock.Load()-c0) * time.Millisecond
	if moved == 0 || moved > time.Since(start) {
		t.Errorf("the clock moved %v from the wake to the next quiet check, %v of wall time", moved, time.Since(start))
	}
	poll.Until(t, 10*time.Second, "the ticker to sleep again", h.pool.ticker.Asleep)
}
