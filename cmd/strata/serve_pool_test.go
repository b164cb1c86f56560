package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/config"

	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
)

// These tests put strata's tiers on real memcached processes and check
// what lands where by talking to those servers directly.

func TestThresholdOnePromotesIntoMemcachedL1(t *testing.T) {
	m1, m2 := memcachedtest.Start(t), memcachedtest.Start(t)
	ta := startApp(t, fmt.Sprintf("[l1]\nservers = [%q]\n[l2]\nservers = [%q]\n[promotion]\nthreshold = 2147483648\n", m1.Addr, m2.Addr))
	tc := mctext.Dial(t, ta.proxy.Addr())
	if r := tc.Set("user:1", "alice", 0); r != "STORED" {
		t.Fatalf("set: %q", r)
	}
	if v, ok := rawGet(t, m2.Addr, "user:1"); !ok || v != "alice" {
		t.Fatalf("the set did not reach the L2 memcached: %q %v", v, ok)
	}
	if _, ok := rawGet(t, m1.Addr, "user:1"); ok {
		t.Fatal("the set reached the L1 memcached")
	}
	// N = 2^31: an L2 hit is not promoted (probability 2^-31).
	if v, ok := tc.Get("user:1"); !ok || v != "alice" {
		t.Fatalf("get: %q %v", v, ok)
	}
	if code, body := httpDo(t, "PUT", ta.adminURL("/admin/v1/promotion"), "", `{"threshold": 1}`); code != 200 {
		t.Fatalf("PUT threshold 1: %d %s", code, body)
	}
	// The next L2 hit promotes, asynchronously to the reply.
	if v, ok := tc.Get("user:1"); !ok || v != "alice" {
		t.Fatalf("get after PUT: %q %v", v, ok)
	}
	poll.Until(t, 2*time.Second, "the value in the L1 memcached", func() bool {
		v, ok := rawGet(t, m1.Addr, "user:1")
		return ok && v == "alice"
	})
	// memcached stores the add before strata reads its reply and counts
	// it, so the count may trail the value by a moment.
	poll.Until(t, 2*time.Second, "the promotion counted", func() bool { return ta.layered.Stats().PromotionsDone == 1 })
	// Now an L1 hit: the layering counts it.
	tc.Get("user:1")
	if st := ta.layered.Stats(); st.L1Hits != 1 {
		t.Fatalf("l1 hits = %d, want 1", st.L1Hits)
	}
	// Readiness and the per-server view come from the pools.
	if code, body := httpDo(t, "GET", ta.adminURL("/readyz"), "", ""); code != 200 {
		t.Fatalf("readyz: %d %s", code, body)
	}
	_, body := httpDo(t, "GET", ta.adminURL("/admin/v1/tiers"), "", "")
	if !strings.Contains(body, m1.Addr) || !strings.Contains(body, m2.Addr) || !strings.Contains(body, `"state": "up"`) {
		t.Fatalf("tiers: %s", body)
	}
	st := tc.Stats("")
	if st["strata_l2_pool_servers"] != "1" || st["strata_l2_pool_"+strings.ReplaceAll(m2.Addr, ":", "_")+"_state"] != "up" {
		t.Fatalf("pool stats lines missing: %v", st)
	}
}

func TestReadyzFailsWhenAPoolIsDown(t *testing.T) {
	m := memcachedtest.Start(t)
	ta := startApp(t, fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nservers = [%q]\nfailure_threshold = 1\nprobe_interval = \"50ms\"\ntimeout = \"50ms\"\n", m.Addr))
	tc := mctext.Dial(t, ta.proxy.Addr())
	tc.Set("a", "1", 0)
	m.Stop()
	// Requests to the dead server fail, and mark it down.
	poll.Until(t, 5*time.Second, "readyz 503", func() bool {
		tc.Do("get a\r\n", mctext.EndsAtEND)
		code, _ := httpDo(t, "GET", ta.adminURL("/readyz"), "", "")
		return code == 503
	})
	fams := scrape(t, ta)
	var errs float64
	for _, kind := range []string{"timeout", "down", "error"} {
		errs += metricValue(fams, "strata_backend_errors_total", map[string]string{"tier": "l2", "server": m.Addr, "kind": kind})
	}
	if errs == 0 {
		t.Fatal("no backend errors counted for the dead server")
	}
	m.Restart(t)
	poll.Until(t, 5*time.Second, "readyz 200 after the server returned", func() bool {
		code, _ := httpDo(t, "GET", ta.adminURL("/readyz"), "", "")
		return code == 200
	})
}

func TestReloadMovesL2Traffic(t *testing.T) {
	m1, m2 := memcachedtest.Start(t), memcachedtest.Start(t)
	ta := startApp(t, fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n", m1.Addr))
	tc := mctext.Dial(t, ta.proxy.Addr())
	for i := 0; i < 20; i++ {
		if r := tc.Set("old:"+strconv.Itoa(i), "v", 0); r != "STORED" {
			t.Fatalf("set: %q", r)
		}
	}
	if _, ok := rawGet(t, m1.Addr, "old:7"); !ok {
		t.Fatal("old keys are not on the first server")
	}
	rewrite(t, ta.path, fmt.Sprintf("[l1]\nkind = \"none\"\n[l2]\nservers = [%q]\ntimeout = \"5s\"\n", m2.Addr))
	next, err := config.Load(ta.flags.Path, ta.flags)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := ta.Reload(next)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(rep.Applied, "l2.servers") || len(rep.Kept) != 0 {
		t.Fatalf("reload: %+v", rep)
	}
	// The same client connection keeps being answered, now by m2.
	for i := 0; i < 20; i++ {
		key := "new:" + strconv.Itoa(i)
		if r := tc.Set(key, "w", 0); r != "STORED" {
			t.Fatalf("set %s after reload: %q", key, r)
		}
		if v, ok := tc.Get(key); !ok || v != "w" {
			t.Fatalf("get %s after reload: %q %v", key, v, ok)
		}
		if _, ok := rawGet(t, m2.Addr, key); !ok {
			t.Fatalf("%s is not on the new server", key)
		}
		if _, ok := rawGet(t, m1.Addr, key); ok {
			t.Fatalf("%s went to the removed server", key)
		}
	}
	// The old keys live on m1, which is no longer in the pool: misses.
	if _, ok := tc.Get("old:7"); ok {
		t.Fatal("a key of the removed server was found")
	}
	_, body := httpDo(t, "GET", ta.adminURL("/admin/v1/config"), "", "")
	if !strings.Contains(body, m2.Addr) || strings.Contains(body, m1.Addr) {
		t.Fatalf("the effective config does not show the new list: %s", body)
	}
}
