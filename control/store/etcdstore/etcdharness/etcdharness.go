// Package etcdharness is the storetest.Harness of the etcd store, for
// every package whose tests run the same checks on the memory store and on
// a real etcd: one etcd started by the test, every client reaching it
// through a proxy of its own so a test can cut one client off, compaction
// through a direct admin client, and time that passes for real (etcd's
// lease clock is the server's).
package etcdharness

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

// Dial connects to endpoint with cfg (its Endpoints replaced) and closes
// the client when t ends.
func Dial(t *testing.T, endpoint string, cfg etcdstore.Config) *etcdstore.Store {
	t.Helper()
	cfg.Endpoints = []string{endpoint}
	c, err := etcdstore.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// New returns the harness over srv; every client is dialled with cfg.
func New(t *testing.T, srv *etcdtest.Server, cfg etcdstore.Config) storetest.Harness {
	admin := Dial(t, srv.Endpoint, cfg)
	var mu sync.Mutex // guards proxies
	proxies := make(map[store.Store]*etcdtest.Proxy)
	return storetest.Harness{
		Connect: func(t *testing.T) store.Store {
			p := etcdtest.NewProxy(t, srv.Endpoint)
			c := Dial(t, p.Addr, cfg)
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
		// The suite polls for every outcome of an expiry; what Elapse must
		// provide is the passage of time itself, to show that a kept-alive
		// lease does not expire.
		Elapse: func(t *testing.T, d time.Duration) { <-time.After(d) },
	}
}
