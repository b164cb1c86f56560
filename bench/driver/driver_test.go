package driver

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/strata-cache/strata/bench/workload"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
)

// serverStats reads memcached's own counters.
func serverStats(t *testing.T, addr string) map[string]int64 {
	t.Helper()
	c := mctext.Dial(t, addr)
	defer c.Close()
	out := map[string]int64{}
	for name, v := range c.Stats("") {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			out[name] = n
		}
	}
	return out
}

func delta(before, after map[string]int64, keys ...string) int64 {
	var d int64
	for _, k := range keys {
		d += after[k] - before[k]
	}
	return d
}

func mixedWorkload(t *testing.T, keys uint64, fill bool) *workload.Workload {
	t.Helper()
	p := &workload.Profile{
		Name: "accounting", Seed: 3, Clusters: 2, Overlap: 0.5, FillOnMiss: fill,
		Mix: workload.Mix{Get: 0.5, Set: 0.2, Delete: 0.1, Gets: 0.12, MetaGet: 0.08},
		Families: []workload.Family{{
			Name: "k", Pattern: "acct:{id}", Keys: keys, Weight: 1, Alpha: 0.8,
			ValueSize: workload.Uniform(1, 3000), TTL: workload.Fixed(0),
		}},
	}
	w, err := workload.New(p)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// After a run of exactly R requests at depth D, memcached's own counters
// agree with the driver's, command by command.
func TestClosedLoopAccountingAgreesWithMemcached(t *testing.T) {
	srv := memcachedtest.Start(t)
	for _, tc := range []struct {
		conns, depth int
		requests     int64
		fill         bool
	}{
		{conns: 1, depth: 1, requests: 997, fill: false},
		{conns: 4, depth: 16, requests: 5003, fill: true},
		{conns: 3, depth: 64, requests: 4000, fill: true},
	} {
		before := serverStats(t, srv.Addr)
		res, err := Run(context.Background(), Config{
			Target: srv.Addr, Workload: mixedWorkload(t, 300, tc.fill), Stream: uint64(tc.depth),
			Conns: tc.conns, Pipeline: tc.depth, Requests: tc.requests, Duration: time.Minute,
		})
		if err != nil {
			t.Fatal(err)
		}
		after := serverStats(t, srv.Addr)
		name := "conns " + strconv.Itoa(tc.conns) + " depth " + strconv.Itoa(tc.depth)
		if res.Requests != tc.requests || res.Errors != 0 || res.Lost != 0 {
			t.Fatalf("%s: %d requests answered, %d errors (%s), want exactly %d and none", name, res.Requests, res.Errors, res.FirstErr, tc.requests)
		}
		reads := res.Ops["get"] + res.Ops["gets"] + res.Ops["mg"]
		checks := []struct {
			what         string
			server, ours int64
		}{
			{"cmd_get", delta(before, after, "cmd_get"), reads},
			{"get_hits", delta(before, after, "get_hits"), res.Hits},
			{"get_misses", delta(before, after, "get_misses"), res.Misses},
			{"cmd_set", delta(before, after, "cmd_set"), res.Ops["set"]},
			{"delete_hits", delta(before, after, "delete_hits"), res.Deleted},
			{"delete_misses", delta(before, after, "delete_misses"), res.NotFound},
		}
		for _, c := range checks {
			if c.server != c.ours {
				t.Errorf("%s: memcached %s = %d, driver counted %d", name, c.what, c.server, c.ours)
			}
		}
		if res.Hits == 0 || res.Misses == 0 || res.Deleted == 0 {
			t.Errorf("%s: workload too narrow to test accounting: %+v", name, res)
		}
		if tc.fill && res.Fills == 0 {
			t.Errorf("%s: read-through profile issued no fills", name)
		}
		if res.BadSize != 0 {
			t.Errorf("%s: %d values of the wrong size", name, res.BadSize)
		}
		if res.SendLag != nil {
			t.Errorf("%s: closed loop reports a send lag", name)
		}
		if got := res.Histogram().TotalCount(); got != tc.requests {
			t.Errorf("%s: %d latencies recorded for %d requests", name, got, tc.requests)
		}
	}
}

func TestOpenLoopIssuesRequestedCount(t *testing.T) {
	srv := memcachedtest.Start(t)
	before := serverStats(t, srv.Addr)
	const requests = 1201
	res, err := Run(context.Background(), Config{
		Target: srv.Addr, Workload: mixedWorkload(t, 100, true),
		Conns: 4, Pipeline: 8, Rate: 20000, Requests: requests, Duration: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	after := serverStats(t, srv.Addr)
	if res.Mode != "open" || res.Requests != requests || res.Errors != 0 {
		t.Fatalf("open loop: mode %s, %d answered, %d errors (%s); want %d", res.Mode, res.Requests, res.Errors, res.FirstErr, requests)
	}
	server := delta(before, after, "cmd_get", "cmd_set", "delete_hits", "delete_misses")
	if server != requests {
		t.Errorf("memcached saw %d commands, want %d", server, requests)
	}
	if hits := delta(before, after, "get_hits"); hits != res.Hits {
		t.Errorf("memcached get_hits %d, driver %d", hits, res.Hits)
	}
	// The generator's own lateness is reported in open loop.
	if res.SendLag == nil || res.SendLag.Max == 0 {
		t.Errorf("open loop send lag %+v", res.SendLag)
	}
}

// A prefilled uniform workload answers every read with a hit.
func TestPrefillMakesEveryReadHit(t *testing.T) {
	srv := memcachedtest.Start(t)
	p, _ := workload.Builtin("getset-90-10")
	p.Families[0].Keys = 2000
	w, err := workload.New(p)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Target: srv.Addr, Workload: w, Conns: 3, Pipeline: 4, Requests: 3000})
	if err != nil {
		t.Fatal(err)
	}
	if res.Misses != 0 || res.Hits == 0 || res.HitRatio != 1 {
		t.Errorf("after prefill: %d hits, %d misses", res.Hits, res.Misses)
	}
	if items := serverStats(t, srv.Addr)["curr_items"]; items != 2000 {
		t.Errorf("memcached holds %d items after prefill, want 2000", items)
	}
}

func TestDurationBoundedRunEnds(t *testing.T) {
	srv := memcachedtest.Start(t)
	res, err := Run(context.Background(), Config{
		Target: srv.Addr, Workload: mixedWorkload(t, 50, false), Conns: 2, Pipeline: 2, Duration: 200 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests == 0 || res.Errors != 0 {
		t.Errorf("duration run: %d requests, %d errors", res.Requests, res.Errors)
	}
}

func TestCancelledRunReturns(t *testing.T) {
	srv := memcachedtest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := Run(ctx, Config{Target: srv.Addr, Workload: mixedWorkload(t, 50, false), Rate: 1, Duration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if res.Requests != 0 {
		t.Errorf("cancelled run answered %d requests", res.Requests)
	}
}

func TestUnreachableTargetIsAnError(t *testing.T) {
	port := memcachedtest.FreePort(t)
	_, err := Run(context.Background(), Config{
		Target: "127.0.0.1:" + strconv.Itoa(port), Workload: mixedWorkload(t, 10, false), Requests: 10,
	})
	if err == nil {
		t.Fatal("run against a closed port succeeded")
	}
}

func TestConfigValidation(t *testing.T) {
	w := mixedWorkload(t, 10, false)
	for _, c := range []Config{
		{Workload: w, Requests: 1},
		{Target: "x:1", Requests: 1},
		{Target: "x:1", Workload: w},
		{Target: "x:1", Workload: w, Requests: 1, Pipeline: 5000},
		{Target: "x:1", Workload: w, Requests: 1, Rate: -1},
	} {
		if err := c.validate(); err == nil {
			t.Errorf("accepted %+v", c)
		}
	}
}
