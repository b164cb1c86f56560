package loctable_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/control/store/etcdstore/etcdharness"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/internal/testbin"
)

// scaleEnv names the table sizes TestEtcdScale measures, comma-separated
// ("100000,1000000"); set, it also runs `etcdctl check perf` first and
// takes more samples. Unset, one small table checks that the measurement
// itself works.
const scaleEnv = "STRATA_LOCTABLE_ROWS"

// scaleRegions own the rows round-robin, as three regions would.
var scaleRegions = []string{"region-a", "region-b", "region-c"}

// TestEtcdScale measures the location table in a real etcd (one member,
// on loopback, data in a temporary directory) at each size: etcd's
// memory and database size with the table loaded, the latency of the
// table's own writes (Create, and a move's three transactions one row at
// a time and BatchRows at a time), how long a strata joining takes to be
// ready and serving (a fresh location service), how long the whole
// table takes to come back to a watch that fell behind a compaction (the
// Reset a location service then applies), and how long etcd takes to
// restart on the table. The figures are logged (go test -v); docs/
// locality.md ("Past one etcd") reads them.
//
//	STRATA_LOCTABLE_ROWS=100000,1000000 go test -count=1 -v -timeout 60m \
//	    -run TestEtcdScale ./control/locality/loctable
func TestEtcdScale(t *testing.T) {
	sizes, samples, perf := []int{1000}, 50, false
	if v := os.Getenv(scaleEnv); v != "" {
		sizes, samples, perf = nil, 500, true
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want row counts, comma-separated", scaleEnv, v)
			}
			sizes = append(sizes, n)
		}
	}
	if perf {
		t.Run("check-perf", checkPerf)
	}
	for _, n := range sizes {
		t.Run(strconv.Itoa(n), func(t *testing.T) { measureScale(t, n, samples) })
	}
}

// checkPerf runs etcd's own benchmark of the machine (`etcdctl check
// perf`, the small load: 60 s of writes) on a fresh etcd, for the
// baseline the table's latencies compare with. Its verdict is logged,
// not asserted: it judges the machine, not strata.
func checkPerf(t *testing.T) {
	bin := testbin.Require(t, "etcd-client", "STRATA_SKIP_ETCDCTL", "etcdctl")
	srv := etcdtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--endpoints="+srv.Endpoint, "check", "perf", "--load=s").CombinedOutput()
	for _, line := range strings.FieldsFunc(string(out), func(r rune) bool { return r == '\n' || r == '\r' }) {
		if strings.Contains(line, "%") { // the progress bar, which the first verdict may follow
			_, verdict, _ := strings.Cut(line, "PASS: ")
			if verdict == "" {
				_, verdict, _ = strings.Cut(line, "FAIL: ")
			}
			line = verdict
		}
		if line = strings.TrimSpace(line); line != "" {
			t.Logf("check perf: %s", line)
		}
	}
	if err != nil {
		t.Logf("check perf: %v (FAIL above is the machine's verdict)", err)
	}
}

func measureScale(t *testing.T, n, samples int) {
	srv := etcdtest.Start(t)
	st := etcdharness.Dial(t, srv.Endpoint, etcdstore.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	table := loctable.New(st, "")
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

	db0, use0 := dbSize(ctx, t, st, srv.Endpoint)
	rss0 := procStatus(t, srv.Pid(), "VmRSS")
	began := time.Now()
	loadRows(ctx, t, st, table, n, at)
	load := time.Since(began)
	db1, use1 := dbSize(ctx, t, st, srv.Endpoint)
	rss1 := procStatus(t, srv.Pid(), "VmRSS")
	t.Logf("%d rows loaded in %v (%.0f rows/s); db %d MiB (in use %d MiB, %.0f B/row); etcd RSS %d MiB (%.0f B/row); 2 GiB quota at this in-use cost: %.1f M rows",
		n, load.Round(time.Millisecond), float64(n)/load.Seconds(), db1>>20, use1>>20, float64(use1-use0)/float64(n),
		rss1>>20, float64(rss1-rss0)/float64(n), float64(2<<30)/(float64(use1-use0)/float64(n))/1e6)
	if per := float64(use1-use0) / float64(n); per <= 0 || per > 1024 {
		t.Fatalf("a row costs %.1f B of etcd's database (db %d -> %d); expected (0, 1024]", per, db0, db1)
	}

	writeLatencies(ctx, t, st, table, n, samples, at)
	joinTimes(t, st)
	// Paged (the store's default) against one range, interleaved.
	one := etcdharness.Dial(t, srv.Endpoint, etcdstore.Config{ListPage: 1 << 30})
	for range 2 {
		catchUp(ctx, t, "paged", st, table, n)
		catchUp(ctx, t, "one range", one, table, n)
	}

	began = time.Now()
	srv.Restart(t)
	t.Logf("etcd restarted on the table in %v; RSS after %d MiB", time.Since(began).Round(time.Millisecond),
		procStatus(t, srv.Pid(), "VmRSS")>>20)
}

// loadRows writes n rows as Create writes them (a μ-shard created in
// one of three regions, its creation its one move), 128 a transaction
// (etcd's default --max-txn-ops): one Create a transaction would take an
// hour at a million rows, and the rows' size and keys are the same.
func loadRows(ctx context.Context, t *testing.T, st store.Writer, table *loctable.Table, n int, at time.Time) {
	const perTxn = 128
	ops := make([]store.Op, 0, perTxn)
	for i := 0; i < n; i += perTxn {
		ops = ops[:0]
		for j := i; j < min(i+perTxn, n); j++ {
			owner := scaleRegions[j%len(scaleRegions)]
			e := loctable.Entry{Owner: owner, Epoch: 1, State: loctable.Stable,
				History: []loctable.Move{{Epoch: 1, At: at, To: owner, Reason: "created"}}}
			ops = append(ops, store.Put(table.Key(scaleName(j)), loctable.Encode(e)))
		}
		if _, err := st.Txn(ctx, nil, ops); err != nil {
			t.Fatalf("load at row %d: %v", i, err)
		}
	}
}

// scaleName is the i-th μ-shard's name, keyrule's "prefix field" form.
func scaleName(i int) string { return fmt.Sprintf("user: %07d", i) }

// writeLatencies times the table's writes on the loaded table, through
// its own methods and fenced on a real leadership as the placement
// service's: Create of new μ-shards, a move's Migrate, Promote and
// Settle one row at a time (a round with one move), and MigrateAll,
// PromoteAll and SettleAll of BatchRows rows (a round's batch: its reads
// and one transaction).
func writeLatencies(ctx context.Context, t *testing.T, st *etcdstore.Store, table *loctable.Table, n, samples int, at time.Time) {
	sess, err := st.NewSession(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sess.Close() }()
	l, err := st.Campaign(ctx, sess, locsvc.ElectionName, "scale")
	if err != nil {
		t.Fatal(err)
	}
	var creates latencies
	for i := range samples {
		began := time.Now()
		_, created, err := table.Create(ctx, l, scaleName(n+i), scaleRegions[i%3], at)
		creates.add(time.Since(began))
		if err != nil || !created {
			t.Fatalf("create %s: created %v, %v", scaleName(n+i), created, err)
		}
	}
	// Moves take rows spread over the table, each once, each to the next
	// region.
	stride := max(1, n/(samples+samples/10*loctable.BatchRows+1))
	next := 0
	pick := func() (string, string) {
		i := next * stride % n
		next++
		return scaleName(i), scaleRegions[(i+1)%len(scaleRegions)]
	}
	var migrate, promote, settle latencies
	for range samples {
		name, to := pick()
		for _, step := range []struct {
			l *latencies
			f func() error
		}{
			{&migrate, func() error { _, _, err := table.Migrate(ctx, l, name, 1, to, "better", at); return err }},
			{&promote, func() error { _, _, err := table.PromoteAt(ctx, l, name, 2, at); return err }},
			{&settle, func() error { _, _, err := table.Settle(ctx, l, name, 2); return err }},
		} {
			began := time.Now()
			err := step.f()
			step.l.add(time.Since(began))
			if err != nil {
				t.Fatalf("move %s: %v", name, err)
			}
		}
	}
	var migrateAll, promoteAll, settleAll latencies
	for range max(1, samples/10) {
		var steps []loctable.Step
		for range loctable.BatchRows {
			name, to := pick()
			steps = append(steps, loctable.Step{Name: name, Epoch: 1, To: to, Reason: "better"})
		}
		for _, step := range []struct {
			l     *latencies
			epoch uint64
			f     func([]loctable.Step) ([]loctable.Result, error)
		}{
			{&migrateAll, 1, func(s []loctable.Step) ([]loctable.Result, error) { return table.MigrateAll(ctx, l, s, at) }},
			{&promoteAll, 2, func(s []loctable.Step) ([]loctable.Result, error) { return table.PromoteAll(ctx, l, s, at) }},
			{&settleAll, 2, func(s []loctable.Step) ([]loctable.Result, error) { return table.SettleAll(ctx, l, s) }},
		} {
			for i := range steps {
				steps[i].Epoch = step.epoch
			}
			began := time.Now()
			res, err := step.f(steps)
			step.l.add(time.Since(began))
			if err != nil {
				t.Fatalf("batch of %d: %v", len(steps), err)
			}
			for i, r := range res {
				if r.Err != nil {
					t.Fatalf("batch: %s: %v", steps[i].Name, r.Err)
				}
			}
		}
	}
	t.Logf("write latency p50/p99/max, one transaction each (rows re-read first, as the table does): create %v; one-row migrate %v, promote %v, settle %v",
		creates, migrate, promote, settle)
	t.Logf("batches of %d rows (%d reads and one transaction each): migrate %v, promote %v, settle %v",
		loctable.BatchRows, loctable.BatchRows, migrateAll, promoteAll, settleAll)
}

// joinTimes starts a fresh location service, as a restarted strata
// does, and times it to Ready (its watch started, its ack written) and
// to serving (not Fenced: its join marker came back through the watch).
// Neither reads the table: rows are read on a cache miss, one by one.
func joinTimes(t *testing.T, st *etcdstore.Store) {
	cfg := locsvc.DefaultConfig()
	cfg.Region, cfg.Member = scaleRegions[0], "scale-join"
	svc, err := locsvc.New(cfg, st)
	if err != nil {
		t.Fatal(err)
	}
	began := time.Now()
	svc.Start(nil)
	defer func() { _ = svc.Stop(context.Background()) }()
	var ready time.Duration
	poll.Until(t, time.Minute, "a fresh location service serving", func() bool {
		if ready == 0 && svc.Ready() {
			ready = time.Since(began)
		}
		return ready > 0 && !svc.Fenced(time.Now())
	})
	t.Logf("a fresh location service: ready in %v, serving in %v (polled every %v)",
		ready.Round(time.Millisecond), time.Since(began).Round(time.Millisecond), poll.Interval)
}

// catchUp compacts etcd's history and opens a watch from before it: the
// store hands it the whole table (a Reset), as it does a location
// service that fell behind a compaction, and every row is decoded as
// the service applies it. It reports the time and the heap the table
// takes in one process.
func catchUp(ctx context.Context, t *testing.T, how string, st *etcdstore.Store, table *loctable.Table, n int) {
	_, rev, err := st.Get(ctx, table.RowsPrefix())
	if err != nil {
		t.Fatal(err)
	}
	// A second catch-up finds the store compacted at rev already.
	if _, err := st.Client().Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
		t.Fatalf("compact: %v", err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	began := time.Now()
	w := st.Watch(table.RowsPrefix(), 1)
	defer w.Close()
	b, err := w.Next(ctx)
	if err != nil {
		t.Fatalf("watch: %v", err)
	}
	listed := time.Since(began)
	rows := 0
	for _, c := range b.Changes {
		if _, ok := table.Name(c.Row.Key); !ok {
			continue
		}
		if _, err := loctable.Decode(c.Row.Value); err != nil {
			t.Fatalf("%s: %v", c.Row.Key, err)
		}
		rows++
	}
	took := time.Since(began)
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if !b.Reset || rows < n {
		t.Fatalf("watch from before the compaction: reset %v with %d rows, want the whole table (%d and more)", b.Reset, rows, n)
	}
	t.Logf("whole table to a watch behind a compaction, %s: %d rows listed in %v, decoded in %v; %.0f B of Go heap a row while held",
		how, rows, listed.Round(time.Millisecond), took.Round(time.Millisecond), float64(after.HeapAlloc-before.HeapAlloc)/float64(rows))
	runtime.KeepAlive(b)
}

// latencies are samples of one kind of write.
type latencies []time.Duration

func (l *latencies) add(d time.Duration) { *l = append(*l, d) }

// String is p50/p99/max.
func (l latencies) String() string {
	if len(l) == 0 {
		return "-"
	}
	s := slices.Clone(l)
	slices.Sort(s)
	q := func(p float64) time.Duration { return s[min(len(s)-1, int(p*float64(len(s))))] }
	r := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
	return r(q(0.5)) + "/" + r(q(0.99)) + "/" + r(s[len(s)-1])
}

// dbSize is etcd's database size and the bytes in use, after a
// defragmentation, which commits what the backend holds in memory
// (Status alone reports the last periodic commit) and leaves the file
// as large as its data.
func dbSize(ctx context.Context, t *testing.T, st *etcdstore.Store, endpoint string) (size, inUse int64) {
	if _, err := st.Client().Defragment(ctx, endpoint); err != nil {
		t.Fatalf("defragment: %v", err)
	}
	s, err := st.Client().Status(ctx, endpoint)
	if err != nil {
		t.Fatalf("status: %v", err)
	}
	return s.DbSize, s.DbSizeInUse
}

// procStatus reads a "kB" field of /proc/pid/status, in bytes.
func procStatus(t *testing.T, pid int, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("%s: %v", field, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				t.Fatalf("%s: %v", field, err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s for pid %d", field, pid)
	return 0
}
