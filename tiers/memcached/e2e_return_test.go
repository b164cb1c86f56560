package memcached_test

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/memcached"
)

// hungL1 is the setup of the hung-server tests: every L2 hit promotes
// (N = 1), and the L1 pool gives up on a hung server quickly.
func hungL1() setup {
	return setup{threshold: 1, l1Pool: func(c *memcached.Config) {
		c.RequestTimeout = 200 * time.Millisecond
	}}
}

// TestHungL1ReturnsFlushed: a write acknowledged while the L1 server hung
// (SIGSTOP) and was marked down skipped its invalidation; once it
// continues (SIGCONT), strata must not serve the old copy it still holds.
func TestHungL1ReturnsFlushed(t *testing.T) {
	s := startStrata(t, hungL1())
	c := mustDial(t, s.addr)
	c.deadline(60 * time.Second)
	if l, err := c.set("k", "v1"); err != nil || l != "STORED" {
		t.Fatalf("set v1: %q %v", l, err)
	}
	poll.Until(t, 30*time.Second, "k promoted into L1", func() bool {
		if vals, err := c.get("k"); err != nil || vals["k"] != "v1" {
			t.Fatalf("get k before the hang: %v %v", vals, err)
		}
		return presentDirect(t, s.l1mc.Addr, []string{"k"})["k"] == "v1"
	})

	s.l1mc.Pause(t)
	resumed := false
	defer func() {
		if !resumed {
			s.l1mc.Resume(t)
		}
	}()
	// Reads of other keys time out on L1 until it is marked down; none
	// touches k, so no request about k waits in the hung server.
	for i := 0; serverState(s.l1, s.l1mc.Addr) == "up"; i++ {
		if i > 200 {
			t.Fatal("L1 not marked down after 200 reads")
		}
		if _, err := c.get(fmt.Sprint("other:", i)); err != nil {
			t.Fatal(err)
		}
	}
	if l, err := c.set("k", "v2"); err != nil || l != "STORED" {
		t.Fatalf("set v2 while L1 is down: %q %v", l, err)
	}
	s.l1mc.Resume(t)
	resumed = true

	// Read k until L1 is up again and has served it, and then some.
	readsV2UntilServed(t, s, c, 100)
}

// history is the checker of the randomized test: per key, the highest
// version whose write was acknowledged.
type history struct {
	acked []atomic.Int64
	mu    sync.Mutex
	err   error
}

func (h *history) fail(err error) {
	h.mu.Lock()
	if h.err == nil {
		h.err = err
	}
	h.mu.Unlock()
}

func (h *history) failed() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}

// TestHungL1Randomized: one writer and two readers run while the L1
// server is stopped and continued three times. Checker: a read never
// returns a version older than one acknowledged before the read was sent.
func TestHungL1Randomized(t *testing.T) { hungL1Randomized(t, hungL1()) }

// TestHungL1RandomizedNoThreshold is the same run with a failure threshold
// that timeouts never reach: the server goes down only because writes to
// it were abandoned, and must still never serve a stale value.
func TestHungL1RandomizedNoThreshold(t *testing.T) {
	su := hungL1()
	su.l1Pool = func(c *memcached.Config) {
		c.RequestTimeout = 200 * time.Millisecond
		c.FailureThreshold = memcached.MaxFailureThreshold
	}
	hungL1Randomized(t, su)
}

func hungL1Randomized(t *testing.T, su setup) {
	s := startStrata(t, su)
	const nkeys = 16
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = fmt.Sprint("r:", i)
	}
	h := &history{acked: make([]atomic.Int64, nkeys)}
	var writes, reads atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	defer func() {
		stop.Store(true)
		wg.Wait()
	}()

	wg.Add(1)
	go func() { // the one writer: versions per key only grow
		defer wg.Done()
		c, err := dialRaw(s.addr)
		if err != nil {
			h.fail(err)
			return
		}
		defer c.c.Close()
		for i := 0; !stop.Load(); i++ {
			k := (i * 7) % nkeys
			v := h.acked[k].Load() + 1
			c.deadline(30 * time.Second)
			if l, err := c.set(keys[k], strconv.FormatInt(v, 10)); err != nil || l != "STORED" {
				h.fail(fmt.Errorf("set %s=%d: %q %v", keys[k], v, l, err))
				return
			}
			h.acked[k].Store(v)
			writes.Add(1)
		}
	}()
	for r := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialRaw(s.addr)
			if err != nil {
				h.fail(err)
				return
			}
			defer c.c.Close()
			for i := r; !stop.Load(); i++ {
				k := (i * 5) % nkeys
				floor := h.acked[k].Load()
				c.deadline(30 * time.Second)
				vals, err := c.get(keys[k])
				if err != nil {
					h.fail(fmt.Errorf("get %s: %w", keys[k], err))
					return
				}
				got := int64(0)
				if v, ok := vals[keys[k]]; ok {
					if got, err = strconv.ParseInt(v, 10, 64); err != nil {
						h.fail(fmt.Errorf("get %s = %q", keys[k], v))
						return
					}
				}
				if got < floor {
					h.fail(fmt.Errorf("get %s = %d after %d was acknowledged", keys[k], got, floor))
					return
				}
				reads.Add(1)
			}
		}()
	}

	progress := func(ctr *atomic.Int64, n int64, what string) {
		t.Helper()
		target := ctr.Load() + n
		poll.Until(t, 30*time.Second, what, func() bool { return h.failed() != nil || ctr.Load() >= target })
		if err := h.failed(); err != nil {
			t.Fatal(err)
		}
	}
	progress(&reads, 500, "reads before the first hang")
	for round := range 3 {
		s.l1mc.Pause(t)
		poll.Until(t, 30*time.Second, "L1 marked down", func() bool {
			return h.failed() != nil || serverState(s.l1, s.l1mc.Addr) != "up"
		})
		progress(&writes, 20, fmt.Sprintf("round %d: writes while L1 is down", round))
		s.l1mc.Resume(t)
		poll.Until(t, 30*time.Second, "L1 up again", func() bool {
			return h.failed() != nil || serverState(s.l1, s.l1mc.Addr) == "up"
		})
		hits := s.tier.Stats().L1Hits
		progress(&reads, 500, fmt.Sprintf("round %d: reads after the return", round))
		// The returned server serves again (else the checker proves little).
		poll.Until(t, 30*time.Second, "L1 hits after the return", func() bool {
			return h.failed() != nil || s.tier.Stats().L1Hits > hits+50
		})
	}
	stop.Store(true)
	wg.Wait()
	if err := h.failed(); err != nil {
		t.Fatal(err)
	}
	// At least once per round; a write that times out on the loaded
	// machine between rounds takes it down once more, as it must.
	if st := s.l1.Stats(); st.Total.MarkedDown < 3 {
		t.Errorf("L1 marked down %d times, want at least 3", st.Total.MarkedDown)
	}
}
