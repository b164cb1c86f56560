package memcached_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/shards"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/memcached"
	"github.com/strata-cache/strata/tiers/shardmap"
)

// convertPool is a pool as the control plane's agent consumes it.
type convertPool struct{ *memcached.Pool }

var _ shards.Pool = convertPool{}

func (p convertPool) ShardLoad(l *shards.Load) { p.Pool.ShardLoad((*memcached.ShardLoad)(l)) }

func (convertPool) Unreachable() []string { return nil } // no server fails in this test

// startConvertStrata is one in-process strata over mcs: a twemproxy
// ketama pool, managed (converted by the control plane) or, with compat
// "", a plain unmanaged pool (strata's own map: a switch without
// conversion).
func startConvertStrata(t *testing.T, mcs []*memcachedtest.Server, nshards int, compat string) *moveStrata {
	t.Helper()
	cfg := memcached.Config{Shards: nshards, ProbeInterval: 50 * time.Millisecond, RequestTimeout: 2 * time.Second, MoveLeaseTTL: time.Second}
	if compat != "" {
		cfg.Managed, cfg.Compat, cfg.Distribution, cfg.Hash = true, compat, "ketama", "fnv1a_64"
	}
	for _, m := range mcs {
		cfg.Servers = append(cfg.Servers, memcached.Server{Addr: m.Addr, Weight: 1})
	}
	return serveStrata(t, cfg)
}

// serveStrata is one in-process strata serving a pool of cfg.
func serveStrata(t *testing.T, cfg memcached.Config) *moveStrata {
	t.Helper()
	addr := fmt.Sprintf("127.0.0.1:%d", memcachedtest.FreePort(t))
	pcfg := proxy.Config{Listen: addr, Loops: 2}
	loops := proxytest.Loops(t, pcfg)
	p, err := memcached.New(cfg, loops)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	proxytest.Start(t, pcfg, p, loops)
	return &moveStrata{pool: p, addr: addr}
}

// readLoad is a read-mostly load over the warm keys: 95 % gets, 5 % sets
// of the value the key already has, counted for the hit ratio.
type readLoad struct {
	reads, hits atomic.Int64
	stop        chan struct{}
	wg          sync.WaitGroup
}

func startReadLoad(t *testing.T, addrs []string, keys, workers int) *readLoad {
	rl := &readLoad{stop: make(chan struct{})}
	for w := range workers {
		rl.wg.Add(1)
		go func() {
			defer rl.wg.Done()
			c, err := dialRaw(addrs[w%len(addrs)])
			if err != nil {
				t.Error(err)
				return
			}
			defer c.c.Close()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for {
				select {
				case <-rl.stop:
					return
				default:
				}
				c.deadline(20 * time.Second)
				i := rng.IntN(keys)
				k, v := "warm:"+strconv.Itoa(i), "v"+strconv.Itoa(i)
				if rng.IntN(100) < 5 {
					if l, err := c.set(k, v); err != nil || l != "STORED" {
						t.Errorf("set %s: %q %v", k, l, err)
						return
					}
					continue
				}
				vals, err := c.get(k)
				if err != nil {
					t.Errorf("get %s: %v", k, err)
					return
				}
				rl.reads.Add(1)
				if vals[k] == v {
					rl.hits.Add(1)
				}
			}
		}()
	}
	return rl
}

// mark returns the reads and hits so far.
func (rl *readLoad) mark() [2]int64 { return [2]int64{rl.reads.Load(), rl.hits.Load()} }

func (rl *readLoad) halt() {
	select {
	case <-rl.stop:
	default:
		close(rl.stop)
	}
	rl.wg.Wait()
}

// ratio is the hit ratio between two marks.
// startConvertLoad starts the conversion tests' loads through the two
// stratas: the randomized checker's workload on keys of its own and a
// read-mostly load over the warm keys. It returns them with the grace
// window that lets the reads cover each warm key coverage times, from
// the read rate measured while the checker makes its first 2,000 steps.
func startConvertLoad(t *testing.T, st []*moveStrata, keys int, coverage float64) (*workload, *readLoad, time.Duration) {
	t.Helper()
	wl := startWorkload(t, []string{st[0].addr, st[1].addr}, 200, 4)
	rl := startReadLoad(t, []string{st[0].addr, st[1].addr}, keys, 4)
	rateFrom, rateAt := rl.mark(), time.Now()
	wl.progress(2000)
	warm := rl.mark()
	rate := float64(warm[0]-rateFrom[0]) / time.Since(rateAt).Seconds()
	grace := min(max(time.Duration(coverage*float64(keys)/rate*float64(time.Second)), time.Second), 2*time.Minute).Round(time.Millisecond)
	t.Logf("read-mostly load: %.0f reads/s, hit ratio %.4f; grace %v", rate, ratio(rateFrom, warm), grace)
	return wl, rl, grace
}

// conversionRun is what the read-mostly load saw during a conversion and
// after it, and what the pools' moves counted.
type conversionRun struct {
	during, after            float64
	m1, m2                   [2]int64
	fills, lost, leaseMisses uint64
}

// finishConversion waits, once the map has left the layout, for every
// pool to have applied it, lets the checker make 2,000 more steps and the
// load read as many keys as there are warm keys, and stops the load. m0
// is the load's mark when the conversion began.
func finishConversion(t *testing.T, st []*moveStrata, wl *workload, rl *readLoad, keys int, m0 [2]int64) conversionRun {
	t.Helper()
	var r conversionRun
	r.m1 = rl.mark()
	for _, s := range st {
		poll.Until(t, time.Minute, "the pools converted", func() bool { return s.pool.Stats().Moves.OnLayout == 0 })
	}
	wl.progress(2000)
	target := rl.mark()[0] + int64(keys)
	poll.Until(t, 5*time.Minute, "reads after the conversion", func() bool { return rl.mark()[0] >= target })
	r.m2 = rl.mark()
	rl.halt()
	r.during, r.after = ratio(m0, r.m1), ratio(r.m1, r.m2)
	for _, s := range st {
		m := s.pool.Stats().Moves
		r.fills, r.lost, r.leaseMisses = r.fills+m.Fills, r.lost+m.FillsLost, r.leaseMisses+m.LeaseMisses
	}
	return r
}

func ratio(a, b [2]int64) float64 {
	if b[0] == a[0] {
		return 0
	}
	return float64(b[1]-a[1]) / float64(b[0]-a[0])
}

// fillWarm writes keys warm:i = vi through addr, in parallel.
func fillWarm(t *testing.T, addr string, keys int) {
	var wg sync.WaitGroup
	const workers = 4
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := dialRaw(addr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.c.Close()
			c.deadline(5 * time.Minute)
			for i := w; i < keys; i += workers {
				if l, err := c.set("warm:"+strconv.Itoa(i), "v"+strconv.Itoa(i)); err != nil || l != "STORED" {
					t.Errorf("fill: %q %v", l, err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// sampleHits reads n random warm keys through addr and returns the hit
// ratio.
// warmBaseline is the hit ratio over a sample of the warm keys through
// layout (a strata on the layout that placed them), which must be all but
// whole, and through plain (one on another placement, without a
// conversion): what a conversion is measured against.
func warmBaseline(t *testing.T, layout, plain string, keys int) (before, switched float64) {
	t.Helper()
	n := min(keys, 20000)
	before, switched = sampleHits(t, layout, keys, n), sampleHits(t, plain, keys, n)
	if before < 0.999 {
		t.Fatalf("hit ratio %.4f before the conversion: the keys are not where the layout puts them", before)
	}
	return before, switched
}

func sampleHits(t *testing.T, addr string, keys, n int) float64 {
	c := mustDial(t, addr)
	defer c.c.Close()
	c.deadline(5 * time.Minute)
	rng := rand.New(rand.NewPCG(3, 4))
	hits := 0
	for range n {
		i := rng.IntN(keys)
		k := "warm:" + strconv.Itoa(i)
		vals, err := c.get(k)
		if err != nil {
			t.Fatal(err)
		}
		if vals[k] == "v"+strconv.Itoa(i) {
			hits++
		}
	}
	return float64(hits) / float64(n)
}

// convertPlanes builds the control plane of each strata of st, over the
// etcd at endpoint, converting their compat pool (to another layout with
// toLayout) in batches of batch shards with a handoff window of grace;
// the first leads. They are not started.
func convertPlanes(t *testing.T, endpoint string, st []*moveStrata, members []shardmap.Server, grace time.Duration, batch int, toLayout bool) []*shards.Plane {
	var planes []*shards.Plane
	for i, s := range st {
		es, err := etcdstore.New(etcdstore.Config{Endpoints: []string{endpoint}})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := shards.NewPlane(shards.PlaneConfig{
			Candidate: "strata-" + strconv.Itoa(i), Lead: i == 0,
			Agent: shards.AgentConfig{ReportInterval: 200 * time.Millisecond, SessionTTL: 5},
			Runner: shards.RunnerConfig{
				Leader:        shards.LeaderConfig{Detection: 5 * time.Second, Rebalance: time.Hour, Grace: time.Second, ConvertGrace: grace, MaxMoves: batch},
				ProbeInterval: 100 * time.Millisecond, ProbeTimeout: 500 * time.Millisecond, SessionTTL: 5,
			},
		}, es, []shards.ManagedTier{{Name: "l2", Pool: convertPool{s.pool}, Shards: s.pool.ShardMap().Shards(), Initial: s.pool.ShardMap(),
			Members: members, Settle: s.pool.MoveLeaseTTL(), Compat: true, ToLayout: toLayout}})
		if err != nil {
			t.Fatal(err)
		}
		planes = append(planes, pl)
	}
	return planes
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

// TestConvertWarm: four memcached filled through strata in a twemproxy
// ketama layout are converted, by the control plane over a real etcd, to
// strata's own map in batches, with a pause and a resume half way; two
// strata serve a read-mostly load on the warm keys and the randomized
// clients of TestMovesRandomized on others throughout. No read may be
// stale, and the hit ratio during the conversion must stay within 95 %
// of the one before. STRATA_CONVERT_KEYS sets the warm keys (default
// 10,000; the figure is 100,000).
//
// A key is carried over only if it is read during its shard's handoff
// window (ConvertGrace); one read later misses. The load here reads keys
// uniformly, the worst case, so the test sets ConvertGrace to the time the load
// takes to read every warm key about eight times over, from the read rate
// it measures before: the rule for an operator is a window no shorter
// than the time the fleet takes to read its working set a few times.
// Eight, not four, because the rate is measured once: when other tests
// take the machine's cores mid-conversion (CI runs packages side by
// side), the load reads half as fast, and at four a run saw 94.5 %.
func TestConvertWarm(t *testing.T) {
	const nshards, batch, coverage = 256, 64, 8
	keys := envInt("STRATA_CONVERT_KEYS", 10000)
	etcd := etcdtest.Start(t)
	var mcs []*memcachedtest.Server
	var members []shardmap.Server
	for range 4 {
		m := memcachedtest.Start(t)
		mcs = append(mcs, m)
		members = append(members, shardmap.Server{Addr: m.Addr, Weight: 1})
	}
	st := []*moveStrata{startConvertStrata(t, mcs, nshards, "twemproxy"), startConvertStrata(t, mcs, nshards, "twemproxy")}
	plain := startConvertStrata(t, mcs, nshards, "")

	fillWarm(t, st[0].addr, keys)
	before, switched := warmBaseline(t, st[1].addr, plain.addr, keys)
	t.Logf("%d warm keys: hit ratio %.4f through the compat layout, %.4f through strata's own map without conversion", keys, before, switched)

	wl, rl, grace := startConvertLoad(t, st, keys, coverage)
	defer wl.halt()
	defer rl.halt()
	planes := convertPlanes(t, etcd.Endpoint, st, members, grace, batch, false)
	view := planes[0].View()
	shardMap := func() admin.ShardMap {
		m, err := view.ShardMap(context.Background(), "l2")
		if err != nil {
			t.Fatal(err)
		}
		return m
	}

	m0, start := rl.mark(), time.Now()
	for _, pl := range planes {
		pl.Start()
		defer func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = pl.Stop(ctx)
		}()
	}

	// Pause half way: the batch in flight ends, and no other starts.
	poll.Until(t, 5*time.Minute, "half the shards converted", func() bool { return shardMap().OnLayout <= nshards/2 })
	if err := view.SetConvertPaused(context.Background(), "l2", true); err != nil {
		t.Fatal(err)
	}
	pausedAt := time.Now()
	poll.Until(t, time.Minute, "the batch in flight ended", func() bool { m := shardMap(); return m.Phase == "" && m.Version > 0 })
	held := shardMap()
	wl.progress(3000) // the leader runs a round every 100ms meanwhile
	if m := shardMap(); m.OnLayout != held.OnLayout || m.Phase != "" {
		t.Fatalf("paused, yet the conversion went on: %+v then %+v", held, m)
	}
	if !held.ConvertPaused || held.LayoutShare <= 0 || held.LayoutShare >= 1 {
		t.Errorf("paused half way: %+v", held)
	}
	pause := time.Since(pausedAt)
	if err := view.SetConvertPaused(context.Background(), "l2", false); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, 5*time.Minute, "every shard converted", func() bool { m := shardMap(); return m.OnLayout == 0 && m.Phase == "" })
	took := time.Since(start)
	r := finishConversion(t, st, wl, rl, keys, m0)
	during, after, m1, m2 := r.during, r.after, r.m1, r.m2
	fills, lost, leaseMisses := r.fills, r.lost, r.leaseMisses
	t.Logf("conversion of %d shards in batches of %d, grace %v: %v, of which %v paused (the batch in flight ended meanwhile); %d fills, %d lost to a racing write, %d reads met another's lease",
		nshards, batch, grace, took.Round(time.Millisecond), pause.Round(time.Millisecond), fills, lost, leaseMisses)
	t.Logf("hit ratio of the read-mostly load: %.4f during (%d reads), %.4f after (%d reads); %.4f before, %.4f switching without conversion",
		during, m1[0]-m0[0], after, m2[0]-m1[0], before, switched)
	hits, acked := wl.check()
	if hits < 100 || acked < 100 {
		t.Errorf("only %d hits and %d acknowledged writes: the checker's clients did little", hits, acked)
	}
	if during < 0.95*before {
		t.Errorf("hit ratio %.4f during the conversion, below 95 %% of %.4f before", during, before)
	}
	if fills == 0 {
		t.Error("nothing was filled: the conversion was not warm")
	}
}
