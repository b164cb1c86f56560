package conformance

import (
	"context"
	"testing"
	"time"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers/layered"
	"github.com/strata-cache/strata/tiers/memcached"
)

// startStrataOverPools starts strata in this process with an L1 pool and an
// L2 pool, each one real memcached, and returns its address.
func startStrataOverPools(t *testing.T) string {
	t.Helper()
	pool := func(s *memcachedtest.Server) *memcached.Pool {
		p, err := memcached.New(memcached.Config{Servers: []memcached.Server{{Addr: s.Addr}}})
		if err != nil {
			t.Fatalf("pool: %v", err)
		}
		t.Cleanup(func() { _ = p.Close() })
		return p
	}
	l1 := pool(memcachedtest.Start(t, "-m", "64"))
	l2 := pool(memcachedtest.Start(t, "-m", "256"))
	tier, err := layered.New(layered.Config{Threshold: 32}, l1, l2)
	if err != nil {
		t.Fatalf("layered tier: %v", err)
	}
	srv, err := proxy.New(proxy.Config{Listen: "127.0.0.1:0"}, tier, proxy.WithPools(l1, l2))
	if err != nil {
		t.Fatalf("proxy.New: %v", err)
	}
	tier.SetExecutor(srv.RunOnLoop)
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
