package hotkeys_test

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/tiers/hotkeys"
)

var counterRule = hotkeys.Rule{Prefix: "votes:", Kind: hotkeys.KindCounter, Split: 8}

// hammer runs goroutines × n increments of key, goroutine g through
// addrs[g % len(addrs)], each on its own client, and fails t on the first
// error. during, when set, runs beside them with the count of increments
// done so far.
func hammer(t *testing.T, addrs []string, key string, goroutines, n int, during func(done *atomic.Int64)) {
	t.Helper()
	var done atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	stop := make(chan struct{})
	var dwg sync.WaitGroup
	if during != nil {
		dwg.Add(1)
		go func() {
			defer dwg.Done()
			during(&done)
			<-stop
		}()
	}
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := client(addrs[g%len(addrs)])
			for i := 0; i < n; i++ {
				if _, err := c.Increment(key, 1); err != nil {
					errs <- fmt.Errorf("goroutine %d incr %d: %w", g, i, err)
					return
				}
				done.Add(1)
			}
		}(g)
	}
	wg.Wait()
	close(stop)
	dwg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// incrs is how many increments one memcached applied: hits, and the
// misses that created a part (ma with N).
func incrs(t *testing.T, addr string) uint64 {
	st := mcStats(t, addr)
	return statUint(t, st, "incr_hits") + statUint(t, st, "incr_misses")
}

// mustGet reads key with the text get command (gomemcache's Get sends
// gets, which answers a split key's folded value too).
func mustGet(t *testing.T, addr, key string) string {
	t.Helper()
	v, ok := mctext.Dial(t, addr).Get(key)
	if !ok {
		t.Fatalf("get %s through %s: miss", key, addr)
	}
	return v
}

// TestCounterTwoStratas: 8 goroutines × 2,000 increments of one counter
// through two stratas over four memcached: the total is exact on both, the
// increments landed on every server, and each server took an equal share
// per part it holds. How many parts a server holds depends on where its
// port hashes (spread balances them over the candidates it finds: two
// each, or three on a server when another drew a single candidate), so
// the shares are checked per part, not against a fixed fraction.
func TestCounterTwoStratas(t *testing.T) {
	mcs := startMemcached(t, 4)
	a := startStrata(t, strataOpts{l2: mcs, cfg: hotkeys.Config{Rules: []hotkeys.Rule{counterRule}}})
	b := startStrata(t, strataOpts{l2: mcs, cfg: hotkeys.Config{Rules: []hotkeys.Rule{counterRule}}})
	if err := client(a.addr).Set(&memcache.Item{Key: "votes:42", Value: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	before := make([]uint64, len(mcs))
	for i, m := range mcs {
		before[i] = incrs(t, m.Addr)
	}
	hammer(t, []string{a.addr, b.addr}, "votes:42", 8, 2000, nil)
	for _, s := range []*strata{a, b} {
		if got := mustGet(t, s.addr, "votes:42"); got != "16000" {
			t.Fatalf("get through %s = %s, want 16000", s.addr, got)
		}
		// gomemcache's Get sends gets, and sees the folded total too.
		if it, err := client(s.addr).Get("votes:42"); err != nil || string(it.Value) != "16000" {
			t.Fatalf("gomemcache Get through %s: %v %v", s.addr, it, err)
		}
	}
	var total, busiest uint64
	servers := 0
	took := make([]uint64, len(mcs))
	for i, m := range mcs {
		n := incrs(t, m.Addr) - before[i]
		took[i] = n
		total += n
		busiest = max(busiest, n)
		if n > 0 {
			servers++
		}
	}
	t.Logf("increments over %d servers: total %d, busiest %.1f%%", servers, total, 100*float64(busiest)/float64(total))
	// An increment that creates a part counts as a miss, then a creation.
	if total < 16000 || total > 16000+2*8 {
		t.Errorf("memcached counted %d increments, want 16000 (+ up to 16 for creating parts)", total)
	}
	if servers < 4 || 2*busiest > total {
		t.Errorf("increments on %d servers, busiest %d of %d", servers, busiest, total)
	}
	// Every loop rotates its increments over the parts, so each part takes
	// an eighth, give or take a few per loop and the parts' creations.
	share := float64(total) / float64(counterRule.Split)
	parts := 0
	for i := range took {
		n := float64(took[i])
		k := math.Round(n / share)
		parts += int(k)
		if k < 1 || math.Abs(n-k*share) > 0.02*k*share+16 {
			t.Errorf("server %d took %.0f increments: not a whole number of parts of %.0f each", i, n, share)
		}
	}
	if parts != counterRule.Split {
		t.Errorf("the servers' shares add up to %d parts, want %d", parts, counterRule.Split)
	}
}

// TestSplitOnOffNoLoss: while 8 goroutines increment one counter, its
// splitting is turned off and on repeatedly, by rule reload and by the
// adaptive detector marking it and the mark expiring; not one increment
// is lost, and decr past zero stops at 0.
func TestSplitOnOffNoLoss(t *testing.T) {
	mcs := startMemcached(t, 4)
	var clock atomic.Int64
	clock.Store(int64(time.Hour))
	marks := hotkeys.NewLocalMarks(int64(time.Second))
	cfg := hotkeys.Config{
		Rules: []hotkeys.Rule{counterRule},
		Rate:  50, Hold: time.Second, HalfLife: time.Second, Sample: 1,
		Now: clock.Load,
	}
	a := startStrata(t, strataOpts{l2: mcs, cfg: cfg, marks: marks})
	b := startStrata(t, strataOpts{l2: mcs, cfg: cfg, marks: marks})
	if err := client(a.addr).Set(&memcache.Item{Key: "votes:7", Value: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	adaptive := counterRule
	adaptive.Adaptive = true
	const perG = 1500
	toggles := 0
	hammer(t, []string{a.addr, b.addr}, "votes:7", 8, perG, func(done *atomic.Int64) {
		// The fake clock runs at one millisecond per increment (1,000/s,
		// far above the rate of 50/s); skip moves it past the hold. Each
		// step waits for some increments to pass under the new state.
		var skip int64
		progress := func(n int64) {
			target := done.Load() + n
			deadline := time.Now().Add(60 * time.Second)
			for done.Load() < target && done.Load() < 8*perG && time.Now().Before(deadline) {
				clock.Store(int64(time.Hour) + skip + done.Load()*int64(time.Millisecond))
				runtime.Gosched()
			}
		}
		for done.Load() < 8*perG-1000 {
			for _, s := range []*strata{a, b} { // reload: adaptive; split only once marked
				if err := s.hk.SetRules([]hotkeys.Rule{adaptive}); err != nil {
					panic(err)
				}
			}
			progress(400) // marked hot and split within about a second of fake time
			skip += int64(3 * time.Second)
			progress(300)                       // the mark expires: unsplit
			for _, s := range []*strata{a, b} { // reload: static split
				if err := s.hk.SetRules([]hotkeys.Rule{counterRule}); err != nil {
					panic(err)
				}
			}
			progress(300)
			toggles++
		}
	})
	want := strconv.Itoa(8 * perG)
	for _, s := range []*strata{a, b} {
		if got := mustGet(t, s.addr, "votes:7"); got != want {
			t.Fatalf("after %d toggles: get through %s = %s, want %s", toggles, s.addr, got, want)
		}
	}
	st := a.hk.Stats()
	t.Logf("%d toggles; marks published %d", toggles, st.MarksPublished+b.hk.Stats().MarksPublished)
	if toggles == 0 || st.MarksPublished+b.hk.Stats().MarksPublished == 0 {
		t.Errorf("splitting was not toggled (toggles %d, marks %+v)", toggles, st)
	}
	// decr past zero, from a counter spread over parts.
	c := client(a.addr)
	if n, err := c.Decrement("votes:7", 8*perG+500); err != nil || n != 0 {
		t.Fatalf("decr past zero: %d, %v", n, err)
	}
	if got := mustGet(t, b.addr, "votes:7"); got != "0" {
		t.Fatalf("after decr past zero: %s", got)
	}
	if n, err := client(b.addr).Increment("votes:7", 5); err != nil || n != 5 {
		t.Fatalf("incr after the floor: %d, %v", n, err)
	}
}

// TestListAppendsOnce: appends of unique tokens from 8 goroutines through
// two stratas each appear exactly once in the final value.
func TestListAppendsOnce(t *testing.T) {
	mcs := startMemcached(t, 4)
	rule := hotkeys.Rule{Prefix: "feed:", Kind: hotkeys.KindList, Split: 8}
	a := startStrata(t, strataOpts{l2: mcs, cfg: hotkeys.Config{Rules: []hotkeys.Rule{rule}}})
	b := startStrata(t, strataOpts{l2: mcs, cfg: hotkeys.Config{Rules: []hotkeys.Rule{rule}}})
	if err := client(a.addr).Set(&memcache.Item{Key: "feed:1", Value: []byte(",")}); err != nil {
		t.Fatal(err)
	}
	const goroutines, n = 8, 250
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := client([]string{a.addr, b.addr}[g%2])
			for i := 0; i < n; i++ {
				tok := fmt.Sprintf("g%di%d,", g, i)
				if err := c.Append(&memcache.Item{Key: "feed:1", Value: []byte(tok)}); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	v := mustGet(t, b.addr, "feed:1")
	seen := map[string]int{}
	for _, tok := range strings.Split(v, ",") {
		if tok != "" {
			seen[tok]++
		}
	}
	for g := 0; g < goroutines; g++ {
		for i := 0; i < n; i++ {
			if c := seen[fmt.Sprintf("g%di%d", g, i)]; c != 1 {
				t.Fatalf("token g%di%d appears %d times", g, i, c)
			}
		}
	}
	if len(seen) != goroutines*n {
		t.Fatalf("%d distinct tokens, want %d", len(seen), goroutines*n)
	}
	// gomemcache's Get sends gets: it sees the folded list. Its
	// CompareAndSwap then answers a conflict; a cas with any other token
	// is a client error, not a server one.
	gc := client(b.addr)
	it, err := gc.Get("feed:1")
	if err != nil || string(it.Value) != v {
		t.Fatalf("gomemcache Get of a split list: %v (%d bytes, want %d)", err, len(it.Value), len(v))
	}
	it.Value = []byte("x")
	if err := gc.CompareAndSwap(it); !errors.Is(err, memcache.ErrCASConflict) {
		t.Fatalf("CompareAndSwap with the folded token: %v, want a CAS conflict", err)
	}
	tc := mctext.Dial(t, a.addr)
	if got := tc.Line("cas feed:1 0 0 1 1\r\nx\r\n"); !strings.HasPrefix(got, "CLIENT_ERROR ") {
		t.Errorf("cas feed:1 with token 1: %q, want CLIENT_ERROR", got)
	}
}

// TestHotReadCopies: a hot read key kept on four L1 servers; after a set
// through strata, no copy on any L1 server serves the old value, and reads
// through strata see the new one.
func TestHotReadCopies(t *testing.T) {
	l1 := startMemcached(t, 4)
	l2 := startMemcached(t, 1)
	rule := hotkeys.Rule{Prefix: "celeb:", Kind: hotkeys.KindRead, Split: 4}
	s := startStrata(t, strataOpts{l1: l1, l2: l2, cfg: hotkeys.Config{Rules: []hotkeys.Rule{rule}}})
	if err := client(s.addr).Set(&memcache.Item{Key: "celeb:1", Value: []byte("old")}); err != nil {
		t.Fatal(err)
	}
	// Many connections read, so every copy gets filled.
	for i := 0; i < 32; i++ {
		c := mctext.Dial(t, s.addr)
		for j := 0; j < 3; j++ {
			if v, _ := c.Get("celeb:1"); v != "old" {
				t.Fatalf("read %d: %q", i, v)
			}
		}
	}
	copies := func(val string) (n int, servers map[string]bool) {
		servers = map[string]bool{}
		for c := 0; c < 4*4; c++ {
			for _, m := range l1 {
				if v, ok := mgDirect(t, m.Addr, subKey("celeb:1", c)); ok && v == val {
					n++
					servers[m.Addr] = true
				}
			}
		}
		return n, servers
	}
	n, servers := copies("old")
	t.Logf("%d copies on %d L1 servers", n, len(servers))
	if n < 2 || len(servers) < 2 {
		t.Fatalf("%d copies on %d servers", n, len(servers))
	}
	if err := client(s.addr).Set(&memcache.Item{Key: "celeb:1", Value: []byte("new")}); err != nil {
		t.Fatal(err)
	}
	if n, _ := copies("old"); n != 0 {
		t.Fatalf("%d copies still hold the old value after the set", n)
	}
	for i := 0; i < 16; i++ {
		c := mctext.Dial(t, s.addr)
		if v, _ := c.Get("celeb:1"); v != "new" {
			t.Fatalf("read after set: %q", v)
		}
		c.Close()
	}
}

// TestBoundedCounterTwoStratas: a counter with bounded replies (staleness
// 20ms) incremented by 8 goroutines through two stratas over four
// memcached: each goroutine's replies never go down, none exceeds the
// final total, the total is exact on both, and most replies came from one
// operation.
func TestBoundedCounterTwoStratas(t *testing.T) {
	mcs := startMemcached(t, 4)
	rule := counterRule
	rule.Reply, rule.Staleness = hotkeys.ReplyBounded, 20*time.Millisecond
	cfg := hotkeys.Config{Rules: []hotkeys.Rule{rule}}
	a, b := startStrata(t, strataOpts{l2: mcs, cfg: cfg}), startStrata(t, strataOpts{l2: mcs, cfg: cfg})
	if err := client(a.addr).Set(&memcache.Item{Key: "votes:5", Value: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	const goroutines, n = 8, 1000
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	highest := make([]uint64, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			c := client([]string{a.addr, b.addr}[g%2])
			var last uint64
			for i := 0; i < n; i++ {
				v, err := c.Increment("votes:5", 1)
				if err != nil || v < last {
					errs <- fmt.Errorf("goroutine %d incr %d: %d after %d, %v", g, i, v, last, err)
					return
				}
				last = v
			}
			highest[g] = last
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for _, s := range []*strata{a, b} {
		if got := mustGet(t, s.addr, "votes:5"); got != strconv.Itoa(goroutines*n) {
			t.Fatalf("get through %s = %s, want %d", s.addr, got, goroutines*n)
		}
	}
	for g, h := range highest {
		if h > goroutines*n {
			t.Fatalf("goroutine %d saw %d, above the total", g, h)
		}
	}
	st := a.hk.Stats()
	t.Logf("strata a: %d bounded replies, %d refreshes, %d waits", st.BoundedReplies, st.BoundedRefreshes, st.BoundedWaits)
	if st.BoundedReplies != goroutines*n/2 || st.BoundedRefreshes > st.BoundedReplies/2 {
		t.Fatalf("stats: %+v", st)
	}
}
