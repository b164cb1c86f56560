package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/admin/ctl"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/poll"
)

// A rolling restart of the four memcached of a managed L2 with `strata ctl
// maintenance --all` under a read-mostly load: the walk takes each server
// out, waits while the test (the operator) restarts it, and brings it
// back; no request fails, and the hit ratio is reported per server.
func TestRollingRestartWithMaintenance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs processes for about a minute")
	}
	etcd := etcdtest.Start(t)
	mc, addrs := startMemcacheds(t, 4)
	cfg := managedL2Config(t, addrs, etcd.Endpoint)
	p := startProcess(t, buildStrata(t), cfg)
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

	const keys = 2000
	cl := memcache.New(p.listen)
	cl.Timeout = 2 * time.Second
	cl.MaxIdleConns = 8
	for i := 0; i < keys; i++ {
		if err := cl.Set(&memcache.Item{Key: fmt.Sprintf("k:%d", i), Value: []byte("v")}); err != nil {
			t.Fatal(err)
		}
	}
	var hits, misses, failed atomic.Int64
	var firstErr atomic.Pointer[error]
	lctx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for lctx.Err() == nil {
				key := fmt.Sprintf("k:%d", r.IntN(keys))
				var err error
				if r.IntN(20) == 0 { // read-mostly: one write in 20
					err = cl.Set(&memcache.Item{Key: key, Value: []byte("v")})
				} else if _, err = cl.Get(key); err == nil {
					hits.Add(1)
				} else if errors.Is(err, memcache.ErrCacheMiss) {
					misses.Add(1)
					err = cl.Set(&memcache.Item{Key: key, Value: []byte("v")}) // a cache fills its misses
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, &err)
				}
			}
		}(w)
	}
	ratio := func() (float64, int64) {
		h, m := hits.Load(), misses.Load()
		if h+m == 0 {
			return 0, 0
		}
		return float64(h) / float64(h+m), h + m
	}
	window := func(d time.Duration) (float64, int64) {
		h0, m0 := hits.Load(), misses.Load()
		time.Sleep(d) // a measuring window under load, not a wait for a condition
		h, m := hits.Load()-h0, misses.Load()-m0
		return float64(h) / float64(max(h+m, 1)), h + m
	}
	poll.Until(t, 10*time.Second, "load running", func() bool { _, n := ratio(); return n > 2000 })
	steady, _ := window(2 * time.Second)

	// The operator: a server the walk emptied is restarted.
	opCtx, stopOp := context.WithCancel(ctx)
	defer stopOp()
	restarted := map[string]bool{}
	var opMu sync.Mutex
	go func() {
		for opCtx.Err() == nil {
			m, err := api.ShardMap(opCtx, "l2")
			if err == nil {
				for _, s := range m.Servers {
					opMu.Lock()
					done := restarted[s.Addr]
					opMu.Unlock()
					if done || s.State != "draining" || s.Shards != 0 || m.MovesInFlight != 0 {
						continue
					}
					for j := range mc {
						if mc[j].Addr != s.Addr {
							continue
						}
						mc[j].Restart(t) // a new process, empty, on the same port
						opMu.Lock()
						restarted[s.Addr] = true
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

	start := time.Now()
	h0, m0 := hits.Load(), misses.Load()
	var out strings.Builder
	err := ctl.Run([]string{"--admin", p.admin, "maintenance", "--all", "--interval", "200ms", "--wait", "4m", "l2"}, &out, &out)
	took := time.Since(start)
	during := float64(hits.Load()-h0) / float64(max(hits.Load()-h0+misses.Load()-m0, 1))
	after, _ := window(2 * time.Second)
	stopLoad()
	wg.Wait()
	stopOp()
	if err != nil {
		t.Fatalf("maintenance --all: %v\n%s", err, out.String())
	}
	opMu.Lock()
	n := len(restarted)
	opMu.Unlock()
	if n != 4 {
		t.Fatalf("%d of 4 servers restarted\n%s", n, out.String())
	}
	if f := failed.Load(); f > 0 {
		t.Errorf("%d requests failed (first: %v)", f, *firstErr.Load())
	}
	t.Logf("rolling restart of 4 servers took %v; hit ratio steady %.3f, during %.3f (%.0f%% of steady), after %.3f\n%s",
		took.Round(100*time.Millisecond), steady, during, 100*during/steady, after, out.String())
	if during < 0.95*steady {
		t.Errorf("hit ratio during the rolling restart %.3f is under 95%% of steady %.3f", during, steady)
	}
}
