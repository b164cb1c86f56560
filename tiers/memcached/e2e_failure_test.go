package memcached_test

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
)

// reader reads random keys of kv through strata on its own connection
// until stopped, and reports the first wrong answer.
type reader struct {
	reads atomic.Int64
	stop  atomic.Bool
	wg    sync.WaitGroup
	mu    sync.Mutex
	err   error
}

func (r *reader) fail(err error) {
	r.mu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.mu.Unlock()
}

func (r *reader) run(addr string, keys []string, kv map[string]string, conns int) {
	for w := range conns {
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			c, err := dialRaw(addr)
			if err != nil {
				r.fail(err)
				return
			}
			defer c.c.Close()
			for i := w; !r.stop.Load(); i++ {
				key := keys[(i*7919)%len(keys)]
				c.deadline(10 * time.Second)
				vals, err := c.get(key)
				if err != nil {
					r.fail(fmt.Errorf("get %s: %w", key, err))
					return
				}
				if vals[key] != kv[key] {
					r.fail(fmt.Errorf("get %s = %q, want %q", key, vals[key], kv[key]))
					return
				}
				r.reads.Add(1)
			}
		}()
	}
}

func (r *reader) finish(t *testing.T) {
	t.Helper()
	r.stop.Store(true)
	r.wg.Wait()
	if r.err != nil {
		t.Fatal(r.err)
	}
}

// progress waits until the readers made n more reads (or failed).
func (r *reader) progress(t *testing.T, n int64, what string) {
	t.Helper()
	target := r.reads.Load() + n
	poll.Until(t, 30*time.Second, what, func() bool {
		r.mu.Lock()
		failed := r.err != nil
		r.mu.Unlock()
		return failed || r.reads.Load() >= target
	})
}

// TestKillL1DuringReads: with the L1 memcached killed in the middle of a
// read loop every get still returns the right value (from L2); when it is
// restarted, the pool finds it again and promotions resume.
func TestKillL1DuringReads(t *testing.T) {
	s := startStrata(t, setup{threshold: 4})
	keys := make([]string, 300)
	kv := map[string]string{}
	for i := range keys {
		keys[i] = fmt.Sprint("hot:", i)
		kv[keys[i]] = strings.Repeat("x", i%50) + keys[i]
	}
	loadDirect(t, s.l2mc[0].Addr, kv)

	var r reader
	r.run(s.addr, keys, kv, 3)
	defer r.finish(t)
	poll.Until(t, 30*time.Second, "L1 hits", func() bool { return s.tier.Stats().L1Hits > 100 })

	s.l1mc.Stop()
	poll.Until(t, 30*time.Second, "the L1 server to be marked down", func() bool {
		return serverState(s.l1, s.l1mc.Addr) != "up"
	})
	r.progress(t, 2000, "reads while L1 is down")
	if st := s.tier.Stats(); st.L1Errors == 0 {
		t.Errorf("L1 was killed but the layering saw no L1 error: %+v", st)
	}

	s.l1mc.Restart(t)
	poll.Until(t, 30*time.Second, "the L1 server to be up again", func() bool {
		return serverState(s.l1, s.l1mc.Addr) == "up"
	})
	done := s.tier.Stats().PromotionsDone
	poll.Until(t, 30*time.Second, "promotions to resume", func() bool {
		return s.tier.Stats().PromotionsDone >= done+20
	})
	if n := len(presentDirect(t, s.l1mc.Addr, keys)); n == 0 {
		t.Error("the restarted L1 holds no promoted key")
	}
	r.progress(t, 500, "reads after the restart")
}

// TestL2ServerDown: with one of two L2 servers stopped, its keys get
// SERVER_ERROR and only its keys; when it returns, it serves again.
func TestL2ServerDown(t *testing.T) {
	s := startStrata(t, setup{l2Servers: 2, rand: neverPromote})
	a, b := s.l2mc[0], s.l2mc[1]
	c := mustDial(t, s.addr)
	c.deadline(30 * time.Second)
	var onA, onB []string
	for i := 0; len(onA) < 20 || len(onB) < 20; i++ {
		k := fmt.Sprint("item:", i)
		if l, err := c.set(k, "v"+k); err != nil || l != "STORED" {
			t.Fatalf("set %s: %q %v", k, l, err)
		}
		if s.l2.ServerFor([]byte(k)) == a.Addr {
			onA = append(onA, k)
		} else {
			onB = append(onB, k)
		}
	}

	b.Stop()
	// Until b is marked down its keys fail with connection errors; then
	// they fail fast with "is down". a's keys are never affected.
	check := func() {
		t.Helper()
		for _, k := range onA {
			vals, err := c.get(k)
			if err != nil || vals[k] != "v"+k {
				t.Fatalf("%s on the live server: %v %v", k, vals, err)
			}
		}
		for _, k := range onB {
			_, err := c.get(k)
			if err == nil || !strings.HasPrefix(err.Error(), "reply line \"SERVER_ERROR ") {
				t.Fatalf("%s on the stopped server: %v", k, err)
			}
		}
	}
	check()
	// Health is judged from traffic: keep asking for b's keys.
	poll.Until(t, 30*time.Second, "b to be marked down", func() bool {
		_, _ = c.get(onB[0])
		return serverState(s.l2, b.Addr) != "up"
	})
	check()
	_, err := c.get(onB[0])
	if want := "SERVER_ERROR backend " + b.Addr + " is down"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("down server's key: %v, want %q", err, want)
	}

	b.Restart(t)
	poll.Until(t, 30*time.Second, "b to be up again", func() bool { return serverState(s.l2, b.Addr) == "up" })
	// b restarted empty: its keys miss, then can be written again.
	for _, k := range onB {
		vals, err := c.get(k)
		if err != nil || len(vals) != 0 {
			t.Fatalf("%s after b returned: %v %v", k, vals, err)
		}
		if l, err := c.set(k, "again"); err != nil || l != "STORED" {
			t.Fatalf("set %s after b returned: %q %v", k, l, err)
		}
		if vals, err := c.get(k); err != nil || vals[k] != "again" {
			t.Fatalf("get %s after b returned: %v %v", k, vals, err)
		}
	}
	if st := s.l2.Stats(); st.Total.MarkedDown != 1 {
		t.Errorf("b marked down %d times, want 1", st.Total.MarkedDown)
	}
}
