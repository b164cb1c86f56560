package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// Three regions on one etcd, each with its own memcached: the CI
// checks of locality routing, one fleet shared by the subtests in order
// (each uses μ-shards of its own).
func TestLocalityThreeRegions(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, three memcached and three strata processes")
	}
	f := startFleet(t, fleetOptions{
		// Long enough that a value written in one step is still there in
		// the next; the rest of the timing stays short.
		maxTTL: "30s", minInterval: "32s",
		viaProxy: map[string]bool{"c": true},
		// c waits longer for its store: it is the one cut off and healed.
		forwardTimeout: map[string]string{"c": "3s"},
		// Longer than etcd stays frozen below while the cached μ-shards
		// are served.
		fenceAfter: "5s",
	})
	a, b, c := f.region("a"), f.region("b"), f.region("c")
	for _, r := range f.regions {
		r.client.Timeout = 20 * time.Second
	}

	t.Run("a μ-shard used from b migrates there and is then served locally", func(t *testing.T) {
		const m, key = "u: 1", "u:{1}:profile"
		a.mustSet(t, key, "v0") // the first access creates it, owned by a
		f.settledAt(t, m, "a", 20*time.Second)
		// From now on only b uses it: its requests go to a, counted remote
		// at b, until the placement service moves the μ-shard.
		i := 0
		poll.Until(t, 40*time.Second, "the μ-shard owned by b", func() bool {
			i++
			v := fmt.Sprintf("v%d", i)
			b.mustSet(t, key, v)
			b.mustGet(t, key, v)
			ms, ok := f.muShard(t, b, m)
			return ok && ms.Owner == "b" && ms.State == "stable"
		})
		ms, _ := f.muShard(t, a, m)
		if ms.Counters["b"] == 0 {
			t.Errorf("the μ-shard's counters show no access from b: %+v", ms)
		}
		if len(ms.History) < 2 {
			t.Errorf("the history holds no migration: %+v", ms)
		}
		local, fwd := f.requests(t, b, "local"), f.requests(t, b, "forwarded")
		for j := 0; j < 50; j++ {
			v := fmt.Sprintf("after%d", j)
			b.mustSet(t, key, v)
			b.mustGet(t, key, v)
		}
		local2, fwd2 := f.requests(t, b, "local"), f.requests(t, b, "forwarded")
		if local2-local < 100 || fwd2 != fwd {
			t.Fatalf("after the migration, 100 requests in b: local %v → %v, forwarded %v → %v", local, local2, fwd, fwd2)
		}
		migrations := 0.0
		for _, r := range f.regions {
			migrations += f.locMetrics(t, r)["strata_locality_migrations_total"]
		}
		if migrations < 1 {
			t.Errorf("no region's placement service counted the migration")
		}
		t.Logf("migrated to b after %d rounds of set+get from b; then 100 requests in b: local +%v, forwarded +%v", i, local2-local, fwd2-fwd)

		// The page's per-region view, from a real strata: b asked, and b
		// now owns the μ-shard.
		code, body := httpDo(t, "GET", "http://"+b.p.admin+"/admin/v1/locality/regions", "", "")
		var regs admin.Regions
		if code != 200 || json.Unmarshal([]byte(body), &regs) != nil {
			t.Fatalf("GET /admin/v1/locality/regions at b: %d %s", code, body)
		}
		var sawB bool
		for _, r := range regs.Regions {
			if r.Region == "b" {
				sawB = r.Requests > 0 && r.MuShards >= 1
			}
		}
		if regs.Self != "b" || !sawB {
			t.Errorf("GET /admin/v1/locality/regions at b: want self b and b with requests and a μ-shard: %s", body)
		}

		// strata ctl reads the same row.
		var out, errOut bytes.Buffer
		if code := run([]string{"ctl", "--admin", c.p.admin, "locality", "show", m}, &out, &errOut); code != 0 {
			t.Fatalf("strata ctl locality show: exit %d: %s", code, errOut.String())
		}
		var shown muShard
		if err := json.Unmarshal(out.Bytes(), &shown); err != nil || shown.ID != m || shown.Owner != "b" {
			t.Fatalf("strata ctl locality show: %v %s", err, out.String())
		}
		out.Reset()
		if code := run([]string{"ctl", "--admin", c.p.admin, "locality", "migrations"}, &out, &errOut); code != 0 || !json.Valid(out.Bytes()) {
			t.Fatalf("strata ctl locality migrations: exit %d: %s %s", code, out.String(), errOut.String())
		}
		if code := run([]string{"ctl", "--admin", c.p.admin, "locality", "show", "u: nope"}, &out, &errOut); code == 0 {
			t.Fatal("strata ctl locality show of an unknown μ-shard succeeded")
		}
	})

	t.Run("a rule pinned in the file keeps its μ-shards in its region", func(t *testing.T) {
		// Created where first used; the placement service applies the
		// rule's pin the next time it decides on the μ-shard, which a
		// remote access makes due.
		a.mustSet(t, "p:{1}:k", "pinned")
		poll.Until(t, 30*time.Second, "p: 1 moved to c by its rule's pin", func() bool {
			b.mustGet(t, "p:{1}:k", "pinned")
			ms, ok := f.muShard(t, a, "p: 1")
			return ok && ms.Owner == "c" && ms.State == "stable"
		})
		a.mustGet(t, "p:{1}:k", "pinned")
		c.mustGet(t, "p:{1}:k", "pinned")
	})

	t.Run("a stale cached location is corrected on the first wrong-owner answer", func(t *testing.T) {
		const m, key = "u: 2", "u:{2}:k"
		a.mustSet(t, key, "w1")
		f.settledAt(t, m, "a", 20*time.Second)
		c.mustGet(t, key, "w1") // c caches: owner a
		wrong, unreach := f.requests(t, c, "wrong_owner"), f.requests(t, c, "owner_unreachable")

		// Cut c off etcd: it cannot learn of the move, and once its lease
		// runs out the placement service stops waiting for its ack.
		c.etcd.Cut()
		healed := false
		defer func() {
			if !healed {
				c.etcd.Heal()
			}
		}()
		f.pin(t, a, m, "b")
		f.settledAt(t, m, "b", 30*time.Second)
		b.mustSet(t, key, "w2")
		// Give etcd back and ask c at once: its watch needs a reconnection
		// and a round trip to catch up, the get reaches c's loop now, so c
		// routes it with its old view. a refuses it as the wrong owner; c
		// reads the location again, bypassing its cache (the store is
		// back within c's forward_timeout), and b serves the retry.
		c.etcd.Heal()
		healed = true
		it, err := c.client.Get(key)
		if err != nil || string(it.Value) != "w2" {
			t.Fatalf("the get through c after the move: %v %v, want w2 (at c: wrong_owner %v → %v, owner_unreachable %v → %v)",
				it, err, wrong, f.requests(t, c, "wrong_owner"), unreach, f.requests(t, c, "owner_unreachable"))
		}
		if got := f.requests(t, c, "wrong_owner"); got != wrong+1 {
			t.Errorf("wrong_owner at c: %v, want %v", got, wrong+1)
		}
		if got := f.requests(t, c, "owner_unreachable"); got != unreach {
			t.Errorf("owner_unreachable at c: %v → %v", unreach, got)
		}
		// Corrected: the next get goes straight to b.
		c.mustGet(t, key, "w2")
		if got := f.requests(t, c, "wrong_owner"); got != wrong+1 {
			t.Errorf("another wrong-owner answer after the correction: %v", got)
		}
	})

	t.Run("a strata cut off etcd alone stops serving its region's μ-shards before they move away", func(t *testing.T) {
		const m, key = "u: 5", "u:{5}:k"
		// c was cut off etcd in the subtest before: it refuses writes of
		// its region's μ-shards until its view is confirmed again, which
		// takes its watch a reconnection after the heal.
		poll.Until(t, 20*time.Second, "c takes writes again after the previous cut", func() bool {
			return c.client.Set(&memcache.Item{Key: key, Value: []byte("x1")}) == nil // created at c, owned by c
		})
		f.settledAt(t, m, "c", 20*time.Second)
		c.etcd.Cut()
		healed := false
		defer func() {
			if !healed {
				c.etcd.Heal()
			}
		}()
		// An outage shorter than fence_after is served.
		c.mustGet(t, key, "x1")
		unreach := f.requests(t, c, "owner_unreachable")
		// The rest of the fleet moves the μ-shard to b: the placement
		// service waits for c's ack until fence_after past its lease.
		f.pin(t, a, m, "b")
		f.settledAt(t, m, "b", 45*time.Second)
		// c never learnt of the move. Serving on its view, it would take a
		// write as the owner and later return it over b's newer one.
		if err := c.client.Set(&memcache.Item{Key: key, Value: []byte("x-stale")}); err == nil {
			t.Fatal("a write through the cut-off strata was acknowledged")
		}
		b.mustSet(t, key, "x2")
		if it, err := c.client.Get(key); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("a read through the cut-off strata: %v %v, want a miss", it, err)
		}
		if got := f.requests(t, c, "owner_unreachable"); got < unreach+2 {
			t.Errorf("owner_unreachable at c: %v → %v, want +2", unreach, got)
		}
		// Back: c joins again, catches up, and forwards to b.
		c.etcd.Heal()
		healed = true
		poll.Until(t, 30*time.Second, "c serving the μ-shard from b", func() bool {
			it, err := c.client.Get(key)
			return err == nil && string(it.Value) == "x2"
		})
	})

	t.Run("a request that arrived on a region link is never forwarded again", func(t *testing.T) {
		testNoForwardingLoop(t, f)
	})

	t.Run("etcd down: cached μ-shards served, no migration; recovery", func(t *testing.T) {
		const m, key = "u: 4", "u:{4}:k"
		a.mustSet(t, key, "e0")
		f.settledAt(t, m, "a", 20*time.Second)
		b.mustGet(t, key, "e0") // b caches: owner a
		before, _ := f.muShard(t, a, m)

		f.etcd.Freeze(t)
		frozen := time.Now()
		thawed := false
		defer func() {
			if !thawed {
				f.etcd.Thaw(t)
			}
		}()
		// Cached: served (forwarded from b to a), reads and writes.
		for i := 0; i < 20; i++ {
			v := fmt.Sprintf("e%d", i+1)
			b.mustSet(t, key, v)
			b.mustGet(t, key, v)
			a.mustGet(t, key, v)
		}
		// Not cached anywhere: its location is unknown while etcd is
		// down; a read answers a miss, in bounded time.
		unreach := f.requests(t, b, "owner_unreachable")
		start := time.Now()
		if _, err := b.client.Get("u:{404}:k"); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("a never-seen μ-shard while etcd is down: %v, want a miss", err)
		}
		if got := f.requests(t, b, "owner_unreachable"); got != unreach+1 {
			t.Errorf("owner_unreachable at b: %v → %v", unreach, got)
		}
		t.Logf("a never-seen μ-shard while etcd is down: a miss after %v", time.Since(start).Round(time.Millisecond))
		// No migration starts: the admin API answers 503 in bounded time.
		if code, body := f.migrateWithin(a, m, "c", 10*time.Second); code != http.StatusServiceUnavailable {
			t.Fatalf("migrate while etcd is down: %d %s, want 503", code, body)
		}
		f.etcd.Thaw(t)
		thawed = true
		thawedAt := time.Now()

		// Recovery: the row is as it was (no move during the outage), a new
		// μ-shard is created, and a migration goes through again.
		var after muShard
		poll.Until(t, 30*time.Second, "the location table readable again", func() bool {
			var ok bool
			after, ok = f.muShard(t, a, m)
			return ok
		})
		for _, h := range after.History[len(before.History):] {
			var mv struct {
				At time.Time `json:"at"`
			}
			if json.Unmarshal(h, &mv) == nil && mv.At.After(frozen) && mv.At.Before(thawedAt) {
				t.Fatalf("a move during the outage: %s", h)
			}
		}
		poll.Until(t, 30*time.Second, "a new μ-shard served after etcd returns", func() bool {
			if err := b.client.Set(&memcache.Item{Key: "u:{45}:k", Value: []byte("r")}); err != nil {
				return false
			}
			it, err := b.client.Get("u:{45}:k")
			return err == nil && string(it.Value) == "r"
		})
		if ms := f.settledAt(t, "u: 45", "b", 10*time.Second); ms.Epoch == 0 {
			t.Fatalf("the new μ-shard: %+v", ms)
		}
		if code, body := f.migrateWithin(a, "u: 45", "c", 10*time.Second); code/100 != 2 {
			t.Fatalf("migrate after recovery: %d %s", code, body)
		}
		f.settledAt(t, "u: 45", "c", 30*time.Second)
	})

	t.Run("SIGTERM stops a region in order", func(t *testing.T) {
		b.p.signal(t, syscall.SIGTERM)
		if code := b.p.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("exit status %d", code)
		}
		if out := b.p.stderr.String(); !strings.Contains(out, `msg=stopped`) {
			t.Fatalf("no clean stop logged:\n%s", tail(out, 2000))
		}
	})
}

// migrateWithin asks r's admin API to move μ-shard name to region to,
// bounded in time: an admin call that hangs on a dead store must not hang
// the test.
func (f *fleet) migrateWithin(r *fleetRegion, name, to string, d time.Duration) (int, string) {
	return postJSON(r.p.admin, muShardPath(name)+"/migrate", fmt.Sprintf(`{"to":%q}`, to), d)
}

// testNoForwardingLoop makes two regions disagree about who owns a
// μ-shard, each believing it is the other, and sends requests to both:
// whatever each answers, a request that arrived on a link is not sent on.
// Counted as the requests each strata sent over its links: only those its
// own clients caused (a forward and at most one retry each).
func testNoForwardingLoop(t *testing.T, f *fleet) {
	a, b, c := f.region("a"), f.region("b"), f.region("c")
	const m, key = "u: 3", "u:{3}:k"
	b.mustSet(t, key, "l1")
	f.settledAt(t, m, "b", 20*time.Second)
	c.mustGet(t, key, "l1") // c caches: owner b

	// Cut c off etcd, and move the μ-shard to c: b learns that c owns
	// it, c keeps believing b does.
	c.etcd.Cut()
	defer c.etcd.Heal()
	f.pin(t, a, m, "c")
	f.settledAt(t, m, "c", 30*time.Second)
	poll.Until(t, 10*time.Second, "b's view: owner c", func() bool {
		// A get through b now goes to c: c cannot confirm (its store is
		// cut) and b's retry gets the same; a miss, never a loop.
		_, err := b.client.Get(key)
		return err == nil || errors.Is(err, memcache.ErrCacheMiss) || strings.Contains(err.Error(), "SERVER_ERROR")
	})

	const n = 20
	sent := func() [3]float64 {
		var out [3]float64
		for i, r := range []*fleetRegion{a, b, c} {
			out[i] = f.locMetrics(t, r)["strata_locality_link_requests_total"]
		}
		return out
	}
	for _, from := range []*fleetRegion{b, c} {
		before := sent()
		for i := 0; i < n; i++ {
			start := time.Now()
			// A miss, or the SERVER_ERROR of a region that cannot tell
			// who owns it; never a timeout.
			if _, err := from.client.Get(key); err != nil && !errors.Is(err, memcache.ErrCacheMiss) && !strings.Contains(err.Error(), "SERVER_ERROR") {
				t.Fatalf("get through %s with disagreeing views: %v", from.name, err)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("get through %s took %v", from.name, d)
			}
		}
		after := sent()
		for i, r := range []*fleetRegion{a, b, c} {
			d := after[i] - before[i]
			switch {
			case r == from && (d < n || d > 2*n):
				t.Errorf("%d gets through %s: it sent %v link requests, want %d to %d", n, r.name, d, n, 2*n)
			case r != from && d != 0:
				t.Errorf("%d gets through %s: %s sent %v link requests, want none (a forwarded link request)", n, from.name, r.name, d)
			}
		}
		t.Logf("%d gets through %s with disagreeing views: link requests sent a/b/c %v/%v/%v", n, from.name,
			after[0]-before[0], after[1]-before[1], after[2]-before[2])
	}
}

// The cache invariant under fire: reads, writes and deletes from every
// region through real clients, migrations forced back and forth through
// the admin API, and the placement service's leader killed with kill -9
// and restarted mid-run. No read may return a value older than the last
// acknowledged write of its key (a miss is allowed). The run is bounded
// in time; its seed is logged (STRATA_LOCALITY_SEED replays one).
func TestLocalityRandomizedInvariant(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, three memcached and three strata processes")
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("STRATA_LOCALITY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("STRATA_LOCALITY_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (STRATA_LOCALITY_SEED=%d replays the workload)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, 1))

	// Short TTLs, so that μ-shards may come back to a region within the
	// run: max_ttl 3s, min_interval 5s (see startFleet on the margin).
	// The links run mutual TLS here: the same invariant must hold through
	// the TLS bridge.
	f := startFleet(t, fleetOptions{maxTTL: "3s", minInterval: "5s", grace: "1s", migrateAfter: "1s", tls: true})
	const muShards = 6
	ck := &checker{keys: 4 * muShards, seed: seed,
		keyOf: func(w, k int) string { return fmt.Sprintf("u:{%d}:w%d:%d", k%muShards, w, k) }}
	for _, r := range f.regions {
		cl := memcache.New(r.listen)
		cl.Timeout = 3 * time.Second
		ck.clients = append(ck.clients, cl)
	}
	// Create every μ-shard in a region of its own before the load, so the
	// forced moves start from known owners.
	for m := 0; m < muShards; m++ {
		f.regions[m%3].mustSet(t, fmt.Sprintf("u:{%d}:seed", m), "0")
	}

	const run = 40 * time.Second
	ctx, stop := context.WithTimeout(context.Background(), run)
	defer stop()
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) { defer wg.Done(); ck.run(ctx, w) }(w)
	}

	// Forced migrations: a random μ-shard to a random region, every
	// 200ms, through a random live region's admin API. Refusals (a move
	// in flight, min_interval, a dead region) are part of the game.
	var accepted, refused atomic.Int64
	var mu sync.Mutex // guards f.regions[*].p while a region restarts
	wg.Add(1)
	go func() {
		defer wg.Done()
		mrng := rand.New(rand.NewPCG(seed, 2))
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			name := fmt.Sprintf("u: %d", mrng.IntN(muShards))
			to := fleetRegionNames[mrng.IntN(3)]
			mu.Lock()
			via := f.regions[mrng.IntN(3)]
			admin := via.p.admin
			mu.Unlock()
			if code, _ := postJSON(admin, muShardPath(name)+"/migrate", fmt.Sprintf(`{"to":%q}`, to), 5*time.Second); code/100 == 2 {
				accepted.Add(1)
			} else {
				refused.Add(1)
			}
		}
	}()

	// Before the kill, a region's strata is stopped and resumed while a
	// client abandons writes to it (stall_fault_test.go).
	var stall stallReport
	wg.Add(1)
	go func() { defer wg.Done(); stall = f.stallRegion(ctx, t, ck, seed, &mu, run) }()

	// A third of the way in, kill -9 the placement service's leader;
	// restart it once another has taken over.
	sleepCtx(ctx, run/3+time.Duration(rng.IntN(int(run/6))))
	victim := f.placementLeader(10 * time.Second)
	t.Logf("kill -9 the placement leader, region %s (pid %d), at %v", victim.name, victim.p.cmd.Process.Pid, time.Now().Format("15:04:05.000"))
	_ = victim.p.cmd.Process.Kill()
	<-victim.p.exited
	poll.Until(t, 20*time.Second, "another placement leader", func() bool {
		r := f.placementLeaderOrNil()
		return r != nil && r != victim
	})
	mu.Lock()
	f.start(victim)
	mu.Unlock()
	t.Logf("region %s restarted; leader now %s", victim.name, f.placementLeaderOrNil().name)

	<-ctx.Done()
	wg.Wait()
	migrations := 0
	for m := 0; m < muShards; m++ {
		if ms, ok := f.muShard(t, f.regions[0], fmt.Sprintf("u: %d", m)); ok {
			migrations += len(ms.History) - 1
		}
	}
	t.Logf("%d reads (%d hits), %d writes, %d errors; migrations requested %d accepted / %d refused; %d moves in the μ-shards' histories (the last %d each)",
		ck.reads.Load(), ck.hits.Load(), ck.writes.Load(), ck.errs.Load(), accepted.Load(), refused.Load(), migrations, loctable.MaxHistory)
	stall.log(t, ck, f.regions[0].listen, f.regions[1].listen, f.regions[2].listen)
	if n := ck.stale.Load(); n != 0 {
		t.Fatalf("%d stale reads; first: %s", n, ck.firstStale)
	}
	if ck.hits.Load() < 500 || ck.writes.Load() < 500 {
		t.Fatalf("too little load to judge: %d hits, %d writes", ck.hits.Load(), ck.writes.Load())
	}
	forwarded := 0.0
	for _, r := range f.regions {
		forwarded += f.requests(t, r, "forwarded")
	}
	if forwarded < 100 {
		t.Fatalf("only %v requests forwarded over the (TLS) links", forwarded)
	}
	if accepted.Load() < 5 || migrations < 5 {
		t.Fatalf("too few migrations to judge: %d accepted, %d in the histories", accepted.Load(), migrations)
	}
}

// sleepCtx waits d or until ctx ends: the schedule of a load test, not a
// synchronisation.
func sleepCtx(ctx context.Context, d time.Duration) {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
	case <-tm.C:
	}
}

// postJSON posts body to an admin API path, bounded in time; code 0 is
// no answer.
func postJSON(admin, path, body string, d time.Duration) (int, string) {
	resp, err := (&http.Client{Timeout: d}).Post("http://"+admin+path, "application/json", strings.NewReader(body))
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// strata control runs the placement service for a fleet whose strata
// serve do not campaign: μ-shards are created (and only then served)
// through it, and it resigns on SIGTERM.
func TestStrataControlRunsThePlacementService(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, memcached and two strata processes")
	}
	etcd := etcdtest.Start(t)
	mc := memcachedtest.Start(t, "-m", "16")
	cfg := writeFile(t, "fleet.toml", fmt.Sprintf(`[server]
region = "a"
[l1]
kind = "none"
[l2]
servers = [%q]
[control]
etcd = [%q]
leader = false
session_ttl = "2s"
[locality]
link_listen = "127.0.0.1:0"
[[locality.rule]]
prefix = "u:"
tag = true
`, mc.Addr, etcd.Endpoint))
	bin := testbin.BuildStrata(t)
	serve := startProcess(t, bin, cfg)
	cl := memcache.New(serve.listen)
	cl.Timeout = 5 * time.Second
	// No candidate yet: a new μ-shard cannot be created, so it is not served.
	if err := cl.Set(&memcache.Item{Key: "u:{1}:k", Value: []byte("v")}); err == nil {
		t.Fatal("a new μ-shard was served with no placement service running")
	}

	control := startControl(t, bin, cfg)
	poll.Until(t, 20*time.Second, "a μ-shard created through strata control", func() bool {
		return cl.Set(&memcache.Item{Key: "u:{1}:k", Value: []byte("v")}) == nil
	})
	if it, err := cl.Get("u:{1}:k"); err != nil || string(it.Value) != "v" {
		t.Fatalf("get: %v %v", it, err)
	}
	st, err := etcdstore.New(etcdstore.Config{Endpoints: []string{etcd.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	row, ok, err := store.Leader(ctx, st, locsvc.ElectionName)
	if err != nil || !ok || !strings.HasPrefix(string(row.Value), "control-") {
		t.Fatalf("the placement leader: %q %v %v", row.Value, ok, err)
	}
	control.terminate(t)
}
