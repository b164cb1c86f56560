package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/admin/ctl"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// rollingLoad is a read-mostly workload that proves no read returns a
// value older than the last acknowledged write of its key: each worker
// owns its keys, whose values are their write counters. One request in
// 25 writes, one in 100 deletes. A miss is counted, then filled with the
// key's last acknowledged value, as a cache-aside client fills from its
// database: the hit ratio recovers, and the misses say what each restart
// cost (a cold restart of one server of four loses a quarter of the keys).
type rollingLoad struct {
	cl   *memcache.Client
	keys int // per worker
	// zipf skews the keys read and written, as a cache's are; false:
	// uniform, the hardest case for a warm handoff, which fills only
	// the keys read during its grace window.
	zipf bool

	reads, hits, misses, failed, stale atomic.Int64
	mu                                 sync.Mutex // guards first
	first                              []string   // the first failure and the first stale read
}

func (l *rollingLoad) fail(stale bool, what string) {
	if stale {
		l.stale.Add(1)
		what = "stale: " + what
	} else {
		l.failed.Add(1)
	}
	l.mu.Lock()
	if len(l.first) < 4 {
		l.first = append(l.first, what)
	}
	l.mu.Unlock()
}

// fill writes every key once, before the load.
func (l *rollingLoad) fill(t *testing.T, workers int) {
	for w := range workers {
		for k := range l.keys {
			if err := l.cl.Set(&memcache.Item{Key: fmt.Sprintf("w%d:k%d", w, k), Value: []byte("1")}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func (l *rollingLoad) run(ctx context.Context, w int) {
	rng := rand.New(rand.NewPCG(uint64(w), 11))
	pick := func() int { return rng.IntN(l.keys) }
	if l.zipf && l.keys > 1 {
		z := rand.NewZipf(rng, 1.01, 1, uint64(l.keys-1))
		pick = func() int { return int(z.Uint64()) }
	}
	type keyState struct {
		acked   int // the last acknowledged write (fill: 1)
		deleted bool
	}
	st := make([]keyState, l.keys)
	for k := range st {
		st[k].acked = 1
	}
	for ctx.Err() == nil {
		k := pick()
		key, s := fmt.Sprintf("w%d:k%d", w, k), &st[k]
		switch r := rng.IntN(100); {
		case r < 4:
			if err := l.cl.Set(&memcache.Item{Key: key, Value: []byte(strconv.Itoa(s.acked + 1))}); err != nil {
				l.fail(false, "set "+key+": "+err.Error())
				continue
			}
			s.acked, s.deleted = s.acked+1, false
		case r < 5:
			if err := l.cl.Delete(key); err != nil && !errors.Is(err, memcache.ErrCacheMiss) {
				l.fail(false, "delete "+key+": "+err.Error())
				continue
			}
			s.deleted = true
		default:
			l.reads.Add(1)
			it, err := l.cl.Get(key)
			switch {
			case errors.Is(err, memcache.ErrCacheMiss):
				if s.deleted {
					continue // the database has nothing either: not a cache miss
				}
				l.misses.Add(1)
				if err := l.cl.Set(&memcache.Item{Key: key, Value: []byte(strconv.Itoa(s.acked))}); err != nil {
					l.fail(false, "fill "+key+": "+err.Error())
				}
			case err != nil:
				l.fail(false, "get "+key+": "+err.Error())
			default:
				if v, _ := strconv.Atoi(string(it.Value)); v < s.acked || s.deleted {
					l.fail(true, fmt.Sprintf("%s read %s after acknowledged %d (deleted %v)", key, it.Value, s.acked, s.deleted))
				} else {
					l.hits.Add(1)
				}
			}
		}
	}
}

// window is the hit ratio and misses of the load over d, measured under
// load (a measuring window, not a wait for a condition).
func (l *rollingLoad) window(d time.Duration) (float64, int64) {
	h0, m0 := l.hits.Load(), l.misses.Load()
	time.Sleep(d)
	h, m := l.hits.Load()-h0, l.misses.Load()-m0
	return float64(h) / float64(max(h+m, 1)), m
}

// A rolling restart of the four memcached of a managed L2 under the
// read-mostly load, twice in one run: with `strata ctl maintenance --all`
// (the admin server's walk), then by hand (drain, kill, restart,
// undrain over the admin API). Neither fails a request or serves a
// stale read; the hit ratio through each, against the steady state
// before it, and the misses are logged. STRATA_ROLLING_KEYS (keys per
// worker, default 500) scales it up, STRATA_ROLLING_ZIPF=1 skews the
// load, STRATA_ROLLING_GRACE sets the grace window (default 2s) and
// STRATA_ROLLING_MAINT_GRACE that of the walk's moves (default 3s: the
// CI run exercises the longer window at little cost).
func TestRollingRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for about two minutes")
	}
	keys := 500
	if v := os.Getenv("STRATA_ROLLING_KEYS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("STRATA_ROLLING_KEYS=%q: want a positive count", v)
		}
		keys = n
	}
	grace := cmp.Or(os.Getenv("STRATA_ROLLING_GRACE"), "2s")
	if _, err := time.ParseDuration(grace); err != nil {
		t.Fatalf("STRATA_ROLLING_GRACE: %v", err)
	}
	maint := cmp.Or(os.Getenv("STRATA_ROLLING_MAINT_GRACE"), "3s")
	if _, err := time.ParseDuration(maint); err != nil {
		t.Fatalf("STRATA_ROLLING_MAINT_GRACE: %v", err)
	}
	zipf := os.Getenv("STRATA_ROLLING_ZIPF") != ""
	bin := testbin.BuildStrata(t)
	for _, mode := range []string{"maintenance --all", "by hand"} {
		t.Run(strings.ReplaceAll(mode, " ", "_"), func(t *testing.T) { rollingRestart(t, bin, mode, keys, zipf, grace, maint) })
	}
}

func rollingRestart(t *testing.T, bin, mode string, keys int, zipf bool, grace, maint string) {
	const workers = 4
	etcd := etcdtest.Start(t)
	mc, addrs := startMemcacheds(t, 4)
	// The control-plane tests' file, with the pool's default failure
	// threshold: theirs (one failure) marks a server down on one slow
	// reply of a loaded machine, and the walk needs no detection (it sees
	// restarts by process id, of servers that own nothing).
	b, err := os.ReadFile(managedL2Config(t, addrs, etcd.Endpoint))
	if err != nil {
		t.Fatal(err)
	}
	conf := strings.Replace(string(b), "failure_threshold = 1\n", "", 1)
	conf = strings.Replace(conf, `grace = "2s"`, fmt.Sprintf("grace = %q\nmaintenance_grace = %q", grace, maint), 1)
	p := startProcess(t, bin, writeFile(t, "rolling.toml", conf))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("strata:\n%s", p.stderr.String())
		}
	})
	api := admin.NewClient(p.admin, "", 5*time.Second)
	ctx := context.Background()
	poll.Until(t, 20*time.Second, "a first published map", func() bool {
		m, err := api.ShardMap(ctx, "l2")
		return err == nil && m.Version >= 1
	})
	cl := memcache.New(p.listen)
	cl.Timeout, cl.MaxIdleConns = 2*time.Second, 2*workers
	load := &rollingLoad{cl: cl, keys: keys, zipf: zipf}
	load.fill(t, workers)
	lctx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() { defer wg.Done(); load.run(lctx, w) }()
	}
	defer func() { stopLoad(); wg.Wait() }()
	poll.Until(t, 10*time.Second, "load running", func() bool { return load.reads.Load() > 2000 })
	steady, _ := load.window(2 * time.Second)

	start := time.Now()
	h0, m0, r0 := load.hits.Load(), load.misses.Load(), load.reads.Load()
	var out strings.Builder
	if mode == "by hand" {
		byHand(t, api, mc, &out)
	} else {
		withMaintenance(t, api, p.admin, mc, &out)
	}
	took := time.Since(start)
	hits, misses := load.hits.Load()-h0, load.misses.Load()-m0
	during := float64(hits) / float64(max(hits+misses, 1))
	after, _ := load.window(2 * time.Second)
	stopLoad()
	wg.Wait()
	dist := "uniform"
	if zipf {
		dist = "zipf"
	}
	t.Logf("rolling restart of 4 servers, %s, %d keys (%s, %.0f reads/s, grace %s, maintenance grace %s): took %v; hit ratio steady %.4f, during %.4f (%.1f%% of steady), after %.4f; %d misses during it (a cold restart of each server would miss about %d); %d failed, %d stale\n%s",
		mode, workers*keys, dist, float64(load.reads.Load()-r0)/took.Seconds(), grace, maint, took.Round(100*time.Millisecond), steady, during, 100*during/steady, after, misses, workers*keys, load.failed.Load(), load.stale.Load(), out.String())
	if load.failed.Load() > 0 || load.stale.Load() > 0 {
		t.Errorf("%d requests failed, %d reads stale: %q", load.failed.Load(), load.stale.Load(), load.first)
	}
	if during < 0.95*steady {
		t.Errorf("hit ratio during the rolling restart %.4f is under 95%% of steady %.4f", during, steady)
	}
}

// withMaintenance walks the pool with strata ctl maintenance --all while an
// operator goroutine restarts each server once the walk says it is empty.
func withMaintenance(t *testing.T, api *admin.Client, adminAddr string, mc []*memcachedtest.Server, out *strings.Builder) {
	ctx := context.Background()
	opCtx, stopOp := context.WithCancel(ctx)
	restarted := map[string]bool{}
	var opMu sync.Mutex // guards restarted
	opDone := make(chan struct{})
	go func() {
		defer close(opDone)
		// The operator follows the walk (the page's source) and restarts
		// a server when the walk says it holds nothing.
		for opCtx.Err() == nil {
			if st, err := api.Maintenance(opCtx); err == nil && st.Running && st.Step == "waiting for it to be stopped" {
				opMu.Lock()
				done := restarted[st.Addr]
				opMu.Unlock()
				for _, srv := range mc {
					if srv.Addr == st.Addr && !done {
						srv.Restart(t) // a new process, empty, on the same port
						opMu.Lock()
						restarted[st.Addr] = true
						opMu.Unlock()
					}
				}
			}
			select {
			case <-opCtx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	err := ctl.Run([]string{"--admin", adminAddr, "maintenance", "--all", "--interval", "200ms", "--wait", "15m", "l2"}, out, out)
	stopOp()
	<-opDone
	if err != nil {
		t.Fatalf("maintenance --all: %v\n%s", err, out.String())
	}
	if len(restarted) != len(mc) {
		t.Fatalf("%d of %d servers restarted\n%s", len(restarted), len(mc), out.String())
	}
	// The page's source: the walk as the admin server last saw it.
	if st, err := api.Maintenance(ctx); err != nil || st.Running || st.Step != "done" || len(st.Servers) != len(mc) {
		t.Errorf("the walk's status after it: %+v %v", st, err)
	}
}

// byHand takes each server through the same steps as an operator would
// with single API calls: drain, wait until it holds nothing, kill and
// restart it, undrain, wait until it owns shards again.
func byHand(t *testing.T, api *admin.Client, mc []*memcachedtest.Server, out *strings.Builder) {
	ctx := context.Background()
	server := func(addr string) (admin.ShardServer, int) {
		m, err := api.ShardMap(ctx, "l2")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range m.Servers {
			if s.Addr == addr {
				return s, m.MovesInFlight
			}
		}
		t.Fatalf("%s not in the map", addr)
		return admin.ShardServer{}, 0
	}
	for _, srv := range mc {
		if _, err := api.SetDrain(ctx, "l2", srv.Addr, true); err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		poll.Until(t, time.Minute, srv.Addr+" emptied", func() bool {
			s, moves := server(srv.Addr)
			return s.State == "draining" && s.Shards == 0 && s.Replicas == 0 && moves == 0
		})
		emptied := time.Since(t0)
		srv.Restart(t)
		if _, err := api.SetDrain(ctx, "l2", srv.Addr, false); err != nil {
			t.Fatal(err)
		}
		poll.Until(t, time.Minute, srv.Addr+" back with shards", func() bool {
			s, moves := server(srv.Addr)
			return s.State == "up" && s.Shards > 0 && moves == 0
		})
		fmt.Fprintf(out, "%s: emptied in %v, back with shards %v later\n", srv.Addr, emptied.Round(100*time.Millisecond), (time.Since(t0) - emptied).Round(100*time.Millisecond))
	}
}
