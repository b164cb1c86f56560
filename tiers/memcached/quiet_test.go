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
// ticker stops waking it; the next request arms it again.
func TestTheTickerLeavesAQuietLoopAlone(t *testing.T) {
	mc := memcachedtest.Start(t)
	h := newHarness(t, Config{Servers: []Server{{Addr: mc.Addr}}, RequestTimeout: 100 * time.Millisecond}, 0)
	ls := h.pool.lstates[0]
	expect(t, "get absent", h.one(get("a")), tiers.StatusMiss, "")
	if !ls.waiting.Load() {
		t.Fatal("a request did not mark its loop as waiting")
	}
	h.loops.until(t, 10*time.Second, "a check finds the loop quiet", func() bool { return !ls.waiting.Load() })
	h.loops.runPending()
	c0 := h.pool.clock.Load()
	poll.Until(t, 10*time.Second, "three ticks pass", func() bool {
		return h.pool.clock.Load() >= c0+3*h.pool.tick.Milliseconds()
	})
	h.loops.mu.Lock()
	queued := len(h.loops.queue)
	h.loops.mu.Unlock()
	if queued != 0 {
		t.Fatalf("the ticker queued %d events on a quiet loop", queued)
	}
	h.one(get("b"))
	if !ls.waiting.Load() {
		t.Fatal("the next request did not arm the loop again")
	}
}
