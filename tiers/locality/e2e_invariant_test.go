package locality_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// history is what the checker knows of one key: every write issued, with
// when it started and when it was acknowledged.
type history struct {
	mu     sync.Mutex
	writes map[string][]*write // key → writes, in issue order
	byVal  map[string]*write
}

type write struct {
	val        string // "" for a delete
	start, end time.Time
	acked      bool // acknowledged (end set); a failed write never is
}

func (h *history) begin(key, val string) *write {
	h.mu.Lock()
	defer h.mu.Unlock()
	w := &write{val: val, start: time.Now()}
	h.writes[key] = append(h.writes[key], w)
	if val != "" {
		h.byVal[val] = w
	}
	return w
}

func (h *history) ack(w *write) {
	h.mu.Lock()
	w.end, w.acked = time.Now(), true
	h.mu.Unlock()
}

// check judges a read of key started at start that returned val (hit):
// the write of val must exist, and no write or delete acknowledged before
// the read started may have begun after val's write was acknowledged (val
// would then be older than an acknowledged write). A write that failed
// may have been applied at any time: it is never older than anything.
func (h *history) check(key, val string, start time.Time) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	w1, ok := h.byVal[val]
	if !ok || !strings.HasPrefix(val, key+"#") {
		return fmt.Errorf("%s read %q, which was never written to it", key, val)
	}
	if !w1.acked {
		return nil
	}
	for _, w2 := range h.writes[key] {
		if w2.acked && w2.end.Before(start) && w1.end.Before(w2.start) {
			what := "write of " + w2.val
			if w2.val == "" {
				what = "delete"
			}
			return fmt.Errorf("%s read %q after the %s acknowledged %v before the read (stale)", key, val, what, start.Sub(w2.end))
		}
	}
	return nil
}

// TestMigrationInvariantRandomized interleaves reads, writes and deletes
// (delete, or a set that has expired already) from every region with migrations of the μ-shards back and forth
// (Prepare → Migrating → Stable, each published to every region), and
// checks every read: no read returns a value older than the last
// acknowledged write (a miss is always allowed). A μ-shard returns to a
// region only after max_ttl plus memcached's clock granularity, as the
// placement's min_interval guarantees.
func TestMigrationInvariantRandomized(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (STRATA_SEED to repeat)", seed)
	rnd := rand.New(rand.NewPCG(seed, 0x10ca1))
	regions := []string{"a", "b", "c"}
	const maxTTL = time.Second
	w := newWorld(t, worldOpts{regions: regions, maxTTL: maxTTL})
	const shards, keysPerShard = 4, 3
	var keys []string
	for m := 0; m < shards; m++ {
		w.create(t, fmt.Sprintf("u: %d", m), regions[m%len(regions)])
		for k := 0; k < keysPerShard; k++ {
			keys = append(keys, fmt.Sprintf("u:{%d}:%d", m, k))
		}
	}
	h := &history{writes: map[string][]*write{}, byVal: map[string]*write{}}
	var ops, hits, errs atomic.Int64
	var failed atomic.Pointer[string]
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for wi, rn := range []string{"a", "a", "b", "b", "c", "c"} {
		c := w.client(t, rn)
		wr := rand.New(rand.NewPCG(seed, uint64(wi)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				key := keys[wr.IntN(len(keys))]
				switch p := wr.IntN(10); {
				case p < 5:
					start := time.Now()
					v, ok, errLine := c.TryGet(key)
					switch {
					case errLine != "":
						errs.Add(1)
					case ok:
						hits.Add(1)
						if err := h.check(key, v, start); err != nil {
							msg := fmt.Sprintf("region %s: %v", rn, err)
							failed.CompareAndSwap(nil, &msg)
						}
					}
				case p < 8:
					val := fmt.Sprintf("%s#%d.%d", key, wi, seq)
					wt := h.begin(key, val)
					if got := c.Set(key, val, 0); got == "STORED" {
						h.ack(wt)
					} else {
						errs.Add(1)
					}
				case p < 9:
					wt := h.begin(key, "")
					if got := c.Delete(key); got == "DELETED" || got == "NOT_FOUND" {
						h.ack(wt)
					} else {
						errs.Add(1)
					}
				default:
					// A set that has expired already: a delete for the
					// checker, since its value must never be read.
					wt := h.begin(key, "")
					if got := c.Set(key, key+"#expired", -1); got == "STORED" {
						h.ack(wt)
					} else {
						errs.Add(1)
					}
				}
				ops.Add(1)
			}
		}()
	}
	// waitOps lets the workers run n more operations against the state
	// just published.
	waitOps := func(n int64) {
		target := ops.Load() + n
		poll.Until(t, 20*time.Second, "workers", func() bool { return ops.Load() >= target || failed.Load() != nil })
	}
	owner := map[int]string{}
	left := map[int]map[string]time.Time{} // μ-shard → region → when it stopped serving it
	for m := 0; m < shards; m++ {
		owner[m] = regions[m%len(regions)]
		left[m] = map[string]time.Time{}
	}
	returnAfter := maxTTL + 2*time.Second // memcached counts expiry in whole seconds
	moves := 0
	deadline := time.Now().Add(12 * time.Second)
	for time.Now().Before(deadline) && failed.Load() == nil {
		m := rnd.IntN(shards)
		var cands []string
		for _, r := range regions {
			if at, ok := left[m][r]; r != owner[m] && (!ok || time.Since(at) > returnAfter) {
				cands = append(cands, r)
			}
		}
		if len(cands) == 0 {
			waitOps(20)
			continue
		}
		to := cands[rnd.IntN(len(cands))]
		from := owner[m]
		w.move(t, fmt.Sprintf("u: %d", m), to, func(loc loccache.Location) {
			if loc.State == loccache.Stable {
				left[m][from] = time.Now()
			}
			waitOps(int64(10 + rnd.IntN(30)))
		})
		owner[m] = to
		moves++
	}
	close(stop)
	wg.Wait()
	if f := failed.Load(); f != nil {
		t.Fatalf("invariant broken (seed %d): %s", seed, *f)
	}
	var fills, lost uint64
	for _, rn := range regions {
		s := w.regions[rn].tier.Stats()
		fills += s.Fills
		lost += s.FillsLost
	}
	t.Logf("%d moves, %d operations, %d hits, %d errors, %d fills (%d lost)", moves, ops.Load(), hits.Load(), errs.Load(), fills, lost)
	if moves < 5 || hits.Load() == 0 {
		t.Fatalf("the run proved little: %d moves, %d hits", moves, hits.Load())
	}
	if errs.Load() > ops.Load()/100 {
		t.Fatalf("%d errors in %d operations", errs.Load(), ops.Load())
	}
}
