package link

import (
	"errors"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality/linkproto"
)

// With no request on any loop the ticker sleeps and the clock stands
// still; a request sent after a sleep longer than the clock's bounded step
// still times out after the whole timeout, not sooner, and the ticker
// sleeps again once the loop is quiet.
func TestTheTickerSleepsWhileEveryLoopIsQuiet(t *testing.T) {
	const timeout = 500 * time.Millisecond
	c, loops, _ := startStepped(t, Config{Timeout: timeout}, nil)
	poll.Until(t, 10*time.Second, "the ticker to sleep", c.ticker.Asleep)
	c0 := c.clock.Load()
	slept := time.Now()
	poll.Until(t, 10*time.Second, "half the timeout of wall time", func() bool { return time.Since(slept) > timeout/2+c.tick() })
	if !c.ticker.Asleep() || c.clock.Load() != c0 || len(loops.events) != 0 {
		t.Fatal("the ticker woke, moved the clock or queued events with every loop quiet")
	}

	op := &tiers.Op{Req: tiers.Request{Kind: tiers.KindGet, Key: []byte("k"), WantValue: true}, Done: func(*tiers.Op) {}}
	op.Res.Status = tiers.StatusHit // not yet done
	start := time.Now()
	c.Send(0, op, linkproto.Token{Epoch: 5})
	loops.flush()
	loops.until(t, func() bool { return op.Res.Status == tiers.StatusError })
	if !errors.Is(op.Res.Err, ErrTimeout) {
		t.Fatalf("%+v, want a timeout", op.Res)
	}
	if el := time.Since(start); el < timeout-c.tick() {
		t.Fatalf("timed out after %v, before the %v timeout", el, timeout)
	}
	// The check that timed the request out found the loop quiet.
	poll.Until(t, 10*time.Second, "the ticker to sleep again", c.ticker.Asleep)
}
