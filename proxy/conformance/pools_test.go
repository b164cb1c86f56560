package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/proxy/proxytest"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
)

// startStrataOverPools starts strata in this process with an L1 pool and an
// L2 pool, each one real memcached, and returns its address.
func startStrataOverPools(t *testing.T) string {
	t.Helper()
	return startOverPools(t, true)
}

// startStrataOverOnePool starts strata in this process on a single tier: one
// pool of one real memcached, no L1.
func startStrataOverOnePool(t *testing.T) string {
	t.Helper()
	return startOverPools(t, false)
}

// targets are the set-ups that the load, ordering and long-line tests run
// on: the embedded tiers, which answer within the callback, and memcached
// pools, whose replies come back later and out of step with the client's
// requests, where ordering bugs would live.
var targets = []struct {
	name  string
	start func(*testing.T) string
}{
	{"embedded", startStrata},
	{"pools-l1-over-l2", startStrataOverPools},
	{"pool-single-tier", startStrataOverOnePool},
}

// forEachTarget runs f as a subtest against a fresh strata of each target.
func forEachTarget(t *testing.T, f func(t *testing.T, addr string)) {
	for _, tg := range targets {
		t.Run(tg.name, func(t *testing.T) { f(t, tg.start(t)) })
	}
}

func startOverPools(t *testing.T, withL1 bool) string {
	t.Helper()
	cfg := proxy.Config{Listen: "127.0.0.1:0"}
	loops := proxytest.Loops(t, cfg)
	pool := func(s *memcachedtest.Server, isL1 bool) *memcached.Pool {
		// The default request timeout (250ms) is for a LAN in production;
		// on a shared test machine under the race detector a dial or one
		// busy loop callback can take longer, and a timeout would fail
		// every request queued on the connection. An L1 pool flushes on
		// return, as strata serve builds it: the layering's promise rests
		// on it when an invalidation is held at a stall (a CI pause of
		// 500ms is one).
		p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: s.Addr}},
			RequestTimeout: 5 * time.Second, DialTimeout: 5 * time.Second, FlushOnReturn: isL1}, loops)
		if err != nil {
			t.Fatalf("pool: %v", err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	l2 := pool(memcachedtest.Start(t, "-m", "256"), false)
	var l1 *memcached.Pool
	if withL1 {
		l1 = pool(memcachedtest.Start(t, "-m", "64"), true)
	}
	var tier *layered.Tier
	var err error
	if withL1 {
		tier, err = layered.New(layered.Config{Threshold: 32}, l1, l2, loops)
	} else {
		tier, err = layered.New(layered.Config{Threshold: 32}, nil, l2, loops)
	}
	if err != nil {
		t.Fatalf("layered tier: %v", err)
	}
	srv, err := proxy.New(cfg, tier, loops)
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	if err := srv.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Stop(ctx)
	})
	return srv.Addr()
}

// The same table of exchanges, against strata whose tiers are memcached
// pools: the meta translation to the backends must not show, but for one
// thing a backend's reply cannot tell.
func TestDifferentialOverPools(t *testing.T) {
	runTable(t, startStrataOverPools(t), map[string]string{
		"burst-quiet-meta-then-mn": "ma with q and N answers HD when it creates the item; " +
			"a backend's reply to ma does not say whether it created the item, so over pools " +
			"strata stays quiet as for any other successful ma",
	})
}

func TestMemccapableOverPools(t *testing.T) {
	runMemccapable(t, startStrataOverPools(t))
}

func TestMemccapableBinaryOverPools(t *testing.T) {
	runMemccapableMode(t, startStrataOverPools(t), "-b")
}
