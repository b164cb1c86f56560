package etcdstore_test

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/etcdtest"
)

var footprintRows = flag.Int("footprint.rows", 10000, "location-table rows TestRowFootprint writes (the report used 100000)")

// etcd's default backend quota (--quota-backend-bytes); etcd advises
// raising it to at most 8 GiB.
const defaultQuota = 2 << 30

// TestRowFootprint measures what a small location-table row costs in etcd:
// the growth of the backend database (file size and bytes in use) and of
// the server's resident memory (etcd keeps its whole key index in RAM),
// per row, over a bulk load of the location table's real rows
// (loctable's key layout and encoding: a μ-shard created in one of three
// regions, its creation in its history; rewritten once as a migration in
// Prepare with two moves). It fails if a row costs
// more than 1 KiB on disk, which would make the location table's budget
// below wrong by a wide margin.
func TestRowFootprint(t *testing.T) {
	srv := etcdtest.Start(t)
	c := connect(t, srv.Endpoint)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	status := func() (size, inUse int64) {
		st, err := c.Client().Status(ctx, srv.Endpoint)
		if err != nil {
			t.Fatalf("status: %v", err)
		}
		return st.DbSize, st.DbSizeInUse
	}
	size0, use0 := status()
	rss0 := rssBytes(t, srv.Pid())
	n := *footprintRows
	table := loctable.New(c, "")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	const perTxn = 128 // etcd's default --max-txn-ops
	var keyBytes, valueBytes int
	load := func(epochBump int) {
		for i := 0; i < n; i += perTxn {
			ops := make([]store.Op, 0, perTxn)
			for j := i; j < i+perTxn && j < n; j++ {
				key := table.Key(fmt.Sprintf("user: %012d", j))
				e := loctable.Entry{Owner: fmt.Sprintf("region-%d", j%3), Epoch: 1, State: loctable.Stable,
					History: []loctable.Move{{Epoch: 1, At: at, To: fmt.Sprintf("region-%d", j%3), Reason: "created"}}}
				if epochBump > 0 {
					e.Epoch, e.State, e.Source, e.Owner = 2, loctable.Prepare, e.Owner, fmt.Sprintf("region-%d", (j+1)%3)
					e.History = append(e.History, loctable.Move{Epoch: 2, At: at.Add(time.Hour), From: e.Source, To: e.Owner, Reason: "better"})
				}
				value := loctable.Encode(e)
				if epochBump == 0 {
					keyBytes += len(key)
					valueBytes += len(value)
				}
				ops = append(ops, store.Put(key, value))
			}
			if _, err := c.Txn(ctx, nil, ops); err != nil {
				t.Fatalf("load at row %d: %v", i, err)
			}
		}
	}
	start := time.Now()
	load(0)
	loadTime := time.Since(start)
	size1, use1 := status()
	rss1 := rssBytes(t, srv.Pid())
	perRow := float64(size1-size0) / float64(n)
	perRowInUse := float64(use1-use0) / float64(n)
	perRowRSS := float64(rss1-rss0) / float64(n)
	t.Logf("rows %d, key %.1f B + value %.1f B per row (plus the %q prefix); loaded in %v (%.0f rows/s, %d rows per txn)",
		n, float64(keyBytes)/float64(n), float64(valueBytes)/float64(n), "strata/", loadTime.Round(time.Millisecond), float64(n)/loadTime.Seconds(), perTxn)
	t.Logf("db size %d -> %d B: %.1f B/row; in use %d -> %d B: %.1f B/row; etcd RSS %d -> %d KiB: %.1f B/row",
		size0, size1, perRow, use0, use1, perRowInUse, rss0>>10, rss1>>10, perRowRSS)
	t.Logf("rows that fit etcd's default 2 GiB quota at the in-use cost: %.2g (8 GiB: %.2g)",
		defaultQuota/perRowInUse, 4*defaultQuota/perRowInUse)
	// Every row rewritten once (a migration bumps the epoch): until
	// compaction the old revision stays, so history costs as much as the
	// table; compaction gives it back to the free list.
	load(1)
	_, use2 := status()
	st, err := c.Client().Status(ctx, srv.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client().Compact(ctx, st.Header.Revision, clientv3.WithCompactPhysical()); err != nil {
		t.Fatalf("compact: %v", err)
	}
	_, use3 := status()
	t.Logf("after rewriting every row once: in use %d B (+%.1f B/row of history); after compaction: %d B",
		use2, float64(use2-use1)/float64(n), use3)
	if perRowInUse <= 0 || perRowInUse > 1024 {
		t.Fatalf("a location row costs %.1f B in etcd's database; expected (0, 1024]", perRowInUse)
	}
}

// rssBytes reads a process's resident set size.
func rssBytes(t *testing.T, pid int) int64 {
	t.Helper()
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("rss: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("rss: %v", err)
			}
			return kb << 10
		}
	}
	t.Fatalf("rss: no VmRSS for pid %d", pid)
	return 0
}
