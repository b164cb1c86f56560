package memcached_test

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadYourWrites: through one strata, once a write is acknowledged no
// later get returns an older value, even with promotions racing the
// writes (N = 2, so half the L2 hits are copied into L1).
//
// Each key has one writer that owns it and writes versions 1, 2, 3, ...:
// version v is a delete when v%5 == 0 and a set of "v<v>" otherwise. The
// writer publishes issued[k] before sending version v and acked[k] after
// strata acknowledged it. A reader on another connection loads a0 =
// acked[k] before its get and i1 = issued[k] after the reply; then
//   - a value of version vr must have a0 <= vr <= i1 (a0 itself is never
//     a delete's version when a value is seen, so vr > a0 then);
//   - a miss is allowed only when a delete may be the latest write: a0 is
//     a delete (or nothing was written yet), or a delete was issued in
//     (a0, i1].
func TestReadYourWrites(t *testing.T) {
	s := startStrata(t, setup{threshold: 2})
	const (
		nkeys    = 6
		readers  = 4
		duration = 2 * time.Second
		maxReads = 40000
	)
	keys := make([]string, nkeys)
	var issued, acked [nkeys]atomic.Int64
	for i := range keys {
		keys[i] = fmt.Sprint("ryw:", i)
	}
	isDelete := func(v int64) bool { return v%5 == 0 }

	var stop atomic.Bool
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failures []string
	var reads, hits atomic.Int64
	fail := func(format string, args ...any) {
		mu.Lock()
		if len(failures) < 10 {
			failures = append(failures, fmt.Sprintf(format, args...))
		}
		mu.Unlock()
		stop.Store(true)
	}

	for ki := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialRaw(s.addr)
			if err != nil {
				fail("writer dial: %v", err)
				return
			}
			defer c.c.Close()
			key := keys[ki]
			for v := int64(1); !stop.Load(); v++ {
				c.deadline(10 * time.Second)
				issued[ki].Store(v)
				var l string
				if isDelete(v) {
					l, err = c.del(key)
					if err == nil && l != "DELETED" && l != "NOT_FOUND" {
						err = fmt.Errorf("reply %q", l)
					}
				} else {
					l, err = c.set(key, "v"+strconv.FormatInt(v, 10)+strings.Repeat(".", int(v%40)))
					if err == nil && l != "STORED" {
						err = fmt.Errorf("reply %q", l)
					}
				}
				if err != nil {
					fail("writer %s v%d: %v", key, v, err)
					return
				}
				acked[ki].Store(v)
				// Read back a few times, which paces the writes and gives
				// promotions a chance to land between them.
				for range 3 {
					vals, err := c.get(key)
					if err != nil {
						fail("writer %s read: %v", key, err)
						return
					}
					if got, ok := vals[key]; ok != !isDelete(v) || ok && version(got) != v {
						fail("writer %s read its own v%d back as %q (present %v)", key, v, got, ok)
						return
					}
				}
			}
		}()
	}
	deadline := time.Now().Add(duration)
	for r := range readers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialRaw(s.addr)
			if err != nil {
				fail("reader dial: %v", err)
				return
			}
			defer c.c.Close()
			for i := r; !stop.Load(); i++ {
				if time.Now().After(deadline) || reads.Add(1) > maxReads {
					stop.Store(true)
					return
				}
				ki := (i * 31) % nkeys
				key := keys[ki]
				a0 := acked[ki].Load()
				c.deadline(10 * time.Second)
				vals, err := c.get(key)
				if err != nil {
					fail("reader get %s: %v", key, err)
					return
				}
				i1 := issued[ki].Load()
				got, ok := vals[key]
				if ok {
					hits.Add(1)
					vr := version(got)
					if vr < a0 || vr > i1 {
						fail("%s: read v%d (%q) after v%d was acknowledged (issued up to v%d)", key, vr, got, a0, i1)
					}
					continue
				}
				if a0 == 0 || isDelete(a0) {
					continue
				}
				deleted := false
				for v := a0 + 1; v <= i1; v++ {
					deleted = deleted || isDelete(v)
				}
				if !deleted {
					fail("%s: miss after v%d was acknowledged and no delete was issued (up to v%d)", key, a0, i1)
				}
			}
		}()
	}
	wg.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	st := s.tier.Stats()
	t.Logf("%d reads (%d hits), %d writes; layered %+v", reads.Load(), hits.Load(), sumWrites(&acked), st)
	if st.PromotionsDone == 0 || st.L1Hits == 0 {
		t.Errorf("no promotion raced the writes (done %d, L1 hits %d): the test proved nothing", st.PromotionsDone, st.L1Hits)
	}
}

// version is the number in a value "v<n>....".
func version(v string) int64 {
	n, err := strconv.ParseInt(strings.TrimRight(strings.TrimPrefix(v, "v"), "."), 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func sumWrites(a *[6]atomic.Int64) int64 {
	var n int64
	for i := range a {
		n += a[i].Load()
	}
	return n
}
