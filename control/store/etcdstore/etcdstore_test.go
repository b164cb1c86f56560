package etcdstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/control/store/storetest"
	"github.com/strata-cache/strata/internal/etcdtest"
)

// connect dials s directly.
func connect(t *testing.T, endpoint string) *etcdstore.Store {
	t.Helper()
	c, err := etcdstore.New(etcdstore.Config{Endpoints: []string{endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// etcdHarness starts a fresh etcd; every client reaches it through a
// proxy of its own, so that the suite can cut one client off.
func etcdHarness(t *testing.T) storetest.Harness {
	srv := etcdtest.Start(t)
	admin := connect(t, srv.Endpoint)
	var mu sync.Mutex // guards proxies
	proxies := make(map[store.Store]*etcdtest.Proxy)
	return storetest.Harness{
		Connect: func(t *testing.T) store.Store {
			p := etcdtest.NewProxy(t, srv.Endpoint)
			c := connect(t, p.Addr)
			mu.Lock()
			proxies[c] = p
			mu.Unlock()
			return c
		},
		Partition: func(t *testing.T, c store.Store, cut bool) {
			mu.Lock()
			p := proxies[c]
			mu.Unlock()
			if cut {
				p.Cut()
			} else {
				p.Heal()
			}
		},
		Compact: func(t *testing.T, rev int64) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := admin.Client().Compact(ctx, rev); err != nil {
				t.Fatalf("compact %d: %v", rev, err)
			}
		},
		// etcd's lease clock is the server's real time. The suite polls
		// for every outcome of an expiry; what Elapse must provide is the
		// passage of time itself, to show that a kept-alive lease does
		// not expire.
		Elapse: func(t *testing.T, d time.Duration) { <-time.After(d) },
	}
}

func TestEtcdStore(t *testing.T) { storetest.Run(t, etcdHarness) }
