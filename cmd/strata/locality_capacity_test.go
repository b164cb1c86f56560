package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/mctext"
	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// A strata with locality routing publishes its region's L2 memory in
// etcd: exactly memcached's own limit_maxbytes, and its bytes, first as
// found at start and then after values written through strata (the pool
// polls its servers every 10 s, so the second check waits for one round).
func TestLocalityCapacityReport(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, memcached and a strata process")
	}
	etcd := etcdtest.Start(t)
	mc := memcachedtest.Start(t, "-m", "24")
	direct := mctext.Dial(t, mc.Addr)
	for i := 0; i < 20; i++ {
		if r := direct.Set(fmt.Sprintf("before%d", i), strings.Repeat("x", 2000), 0); r != "STORED" {
			t.Fatalf("set in memcached: %s", r)
		}
	}
	cfg := writeFile(t, "capacity.toml", fmt.Sprintf(`[server]
region = "a"
[l1]
kind = "none"
[l2]
servers = [%q]
[control]
etcd = [%q]
session_ttl = "2s"
[locality]
link_listen = "127.0.0.1:0"
counter_interval = "100ms"
capacity_ceiling = 0.5
`, mc.Addr, etcd.Endpoint))
	p := startProcess(t, testbin.BuildStrata(t), cfg)

	st, err := etcdstore.New(etcdstore.Config{Endpoints: []string{etcd.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lay := locsvc.NewLayout("")
	memcachedSays := func() (used, limit uint64) {
		s := direct.Stats("")
		used, _ = strconv.ParseUint(s["bytes"], 10, 64)
		limit, _ = strconv.ParseUint(s["limit_maxbytes"], 10, 64)
		return used, limit
	}
	var last locsvc.Capacity
	matches := func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		rows, _, err := st.List(ctx, lay.CapacityPrefix())
		if err != nil || len(rows) != 1 {
			return false
		}
		if rows[0].Lease == 0 {
			t.Fatalf("the capacity row %s is not on the strata's lease", rows[0].Key)
		}
		if last, err = locsvc.DecodeCapacity(rows[0].Value); err != nil {
			t.Fatalf("the capacity row %s: %v", rows[0].Key, err)
		}
		used, limit := memcachedSays()
		return last.Region == "a" && last.Used == used && last.Limit == limit
	}
	poll.Until(t, 20*time.Second, "the capacity row as memcached says at start", matches)
	if last.Limit != 24<<20 || last.Used < 20*2000 {
		t.Fatalf("capacity %+v: want a limit of 24 MiB and the 40000 bytes of values written", last)
	}
	before := last.Used

	// Written through strata (no rule claims these keys: served locally).
	cl := mctext.Dial(t, p.listen)
	for i := 0; i < 20; i++ {
		if r := cl.Set(fmt.Sprintf("after%d", i), strings.Repeat("y", 3000), 0); r != "STORED" {
			t.Fatalf("set through strata: %s", r)
		}
	}
	poll.Until(t, 30*time.Second, "the capacity row after writes through strata", func() bool {
		return matches() && last.Used >= before+20*3000
	})

	// The admin API shows the same figures (the row may have been
	// rewritten since, never with less), far under the 0.5 ceiling.
	code, body := httpDo(t, "GET", "http://"+p.admin+"/admin/v1/locality/regions", "", "")
	var regs admin.Regions
	if code != 200 || json.Unmarshal([]byte(body), &regs) != nil || len(regs.Regions) != 1 {
		t.Fatalf("GET /admin/v1/locality/regions: %d %s", code, body)
	}
	r := regs.Regions[0]
	if r.Region != "a" || r.UsedBytes == nil || r.LimitBytes == nil || r.OverCapacity == nil ||
		*r.LimitBytes != last.Limit || *r.UsedBytes < last.Used || *r.OverCapacity {
		t.Fatalf("GET /admin/v1/locality/regions: %s, want region a with %d of %d bytes, not over", body, last.Used, last.Limit)
	}
}
