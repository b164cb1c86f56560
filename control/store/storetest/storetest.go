package storetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// Harness is how the suite drives one implementation.
type Harness struct {
	// Connect returns a new client of the store under test: what one
	// process would hold. The harness closes it when the test ends.
	Connect func(t *testing.T) store.Store
	// Partition cuts c off the store (true) or reconnects it (false),
	// leaving the store and its other clients as they were.
	Partition func(t *testing.T, c store.Store, cut bool)
	// Compact drops the store's history below rev.
	Compact func(t *testing.T, rev int64)
	// Elapse lets d pass on the clock that lease deadlines follow. A store
	// on real time does nothing: the suite then polls for the outcome.
	Elapse func(t *testing.T, d time.Duration)
}

// TTL is the lease time of the suite's sessions, in seconds: etcd's
// smallest with the raft timers internal/etcdtest sets.
const TTL = 1

// Run runs the whole suite; newHarness starts a fresh, empty store for
// each test, so that revisions are exact and no lease of one test expires
// in another.
func Run(t *testing.T, newHarness func(t *testing.T) Harness) {
	run := func(name string, f func(*testing.T, Harness)) {
		t.Run(name, func(t *testing.T) { f(t, newHarness(t)) })
	}
	run("RowsAndRevisions", testRows)
	run("CompareAndSwap", testCAS)
	run("WatchFromRevision", testWatch)
	run("WatchResumesAfterDisconnect", testWatchResume)
	run("WatchResetsAfterCompaction", testWatchCompaction)
	run("LeaseExpiryRemovesRows", testLeaseExpiry)
	run("SessionCloseRevokes", testSessionClose)
	run("GrantedLeaseRunsOut", testGrantedLease)
	run("ElectionFailover", testElectionFailover)
	run("DeposedLeaderIsFenced", testFenced)
	run("ResignHandsOver", testResign)
	run("PublishVersions", testPublish)
	run("LeaderKilledMidPublication", testKilledMidPublication)
	run("CloseEndsWatches", testClose)
}

// wait is how long the suite waits for anything (generous: the machine is
// shared and etcd's lease checks run every half second).
const wait = 20 * time.Second

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

func mustTxn(t *testing.T, w store.Writer, conds []store.Cond, ops ...store.Op) store.TxnResult {
	t.Helper()
	res, err := w.Txn(ctxT(t), conds, ops)
	if err != nil {
		t.Fatalf("txn: %v", err)
	}
	return res
}

func mustPut(t *testing.T, w store.Writer, key, value string) int64 {
	t.Helper()
	res := mustTxn(t, w, nil, store.Put(key, []byte(value)))
	if !res.Succeeded {
		t.Fatalf("unconditional put of %s failed", key)
	}
	return res.Revision
}

func mustGet(t *testing.T, r store.Reader, key string) store.Row {
	t.Helper()
	row, _, err := r.Get(ctxT(t), key)
	if err != nil {
		t.Fatalf("get %s: %v", key, err)
	}
	return row
}

func mustNext(t *testing.T, w store.Watch) store.Batch {
	t.Helper()
	b, err := w.Next(ctxT(t))
	if err != nil {
		t.Fatalf("watch next: %v", err)
	}
	return b
}

// summary renders a batch as text, so tests compare whole batches.
func summary(b store.Batch) string {
	s := fmt.Sprintf("reset=%v rev=%d", b.Reset, b.Revision)
	for _, c := range b.Changes {
		s += " " + change(c)
	}
	return s
}

func change(c store.Change) string {
	if c.Deleted {
		return fmt.Sprintf("del(%s@%d)", c.Row.Key, c.Row.ModRevision)
	}
	return fmt.Sprintf("put(%s=%s@%d c%d v%d)", c.Row.Key, c.Row.Value, c.Row.ModRevision, c.Row.CreateRevision, c.Row.Version)
}

func testRows(t *testing.T, h Harness) {
	c := h.Connect(t)
	ctx := ctxT(t)
	r1 := mustPut(t, c, "rows/a", "1")
	r2 := mustPut(t, c, "rows/a", "2")
	r3 := mustPut(t, c, "rows/b", "x")
	mustPut(t, c, "rowsx", "outside the prefix")
	if !(r1 < r2 && r2 < r3) {
		t.Fatalf("revisions %d %d %d do not grow", r1, r2, r3)
	}
	a := mustGet(t, c, "rows/a")
	if string(a.Value) != "2" || a.CreateRevision != r1 || a.ModRevision != r2 || a.Version != 2 {
		t.Fatalf("row a = %+v, want value 2 created %d modified %d version 2", a, r1, r2)
	}
	if miss := mustGet(t, c, "rows/none"); miss.Exists() || miss.Key != "rows/none" {
		t.Fatalf("absent row = %+v", miss)
	}
	rows, rev, err := c.List(ctx, "rows/")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Key != "rows/a" || rows[1].Key != "rows/b" || rev < r3 {
		t.Fatalf("list = %+v at %d", rows, rev)
	}
	// Deleting an absent key changes nothing, so it makes no revision.
	if again := mustTxn(t, c, nil, store.Delete("rows/none")).Revision; again != rev {
		t.Fatalf("a delete of an absent key made revision %d (was %d)", again, rev)
	}
	// A recreated key has a new create revision and starts at version 1.
	mustTxn(t, c, nil, store.Delete("rows/a"))
	r5 := mustPut(t, c, "rows/a", "3")
	if a := mustGet(t, c, "rows/a"); a.CreateRevision != r5 || a.Version != 1 {
		t.Fatalf("recreated row = %+v, want created %d version 1", a, r5)
	}
	// A prefix delete removes every row under the prefix in one revision.
	res := mustTxn(t, c, nil, store.DeletePrefix("rows/"))
	if rows, _, _ := c.List(ctx, "rows/"); len(rows) != 0 {
		t.Fatalf("rows left after prefix delete: %+v", rows)
	}
	if other := mustGet(t, c, "rowsx"); !other.Exists() {
		t.Fatalf("prefix delete of rows/ removed rowsx (revision %d)", res.Revision)
	}
}

func testCAS(t *testing.T, h Harness) {
	c := h.Connect(t)
	ctx := ctxT(t)
	if _, err := store.CompareAndSwap(ctx, c, "cas/k", 0, []byte("first")); err != nil {
		t.Fatalf("create with rev 0: %v", err)
	}
	row := mustGet(t, c, "cas/k")
	cur, err := store.CompareAndSwap(ctx, c, "cas/k", 0, []byte("again"))
	if !errors.Is(err, store.ErrConflict) || cur.ModRevision != row.ModRevision || string(cur.Value) != "first" {
		t.Fatalf("second create = %+v, %v; want conflict reporting %+v", cur, err, row)
	}
	if _, err := store.CompareAndSwap(ctx, c, "cas/k", row.ModRevision, []byte("second")); err != nil {
		t.Fatalf("swap at the read revision: %v", err)
	}
	if _, err := store.CompareAndSwap(ctx, c, "cas/k", row.ModRevision, []byte("third")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("swap at a stale revision: %v, want conflict", err)
	}
	// Version and create-revision comparisons, several conditions at once.
	conds := []store.Cond{store.IfVersion("cas/k", 2), store.IfCreateRevision("cas/k", row.CreateRevision), store.IfAbsent("cas/other")}
	if res := mustTxn(t, c, conds, store.Put("cas/other", []byte("o"))); !res.Succeeded {
		t.Fatalf("all conditions hold but txn failed: %+v", res)
	}
	res := mustTxn(t, c, conds, store.Put("cas/other", []byte("p")))
	if res.Succeeded || len(res.Current) != 3 || string(res.Current[2].Value) != "o" || res.Current[0].Version != 2 {
		t.Fatalf("failed txn = %+v; want the current rows of its three conditions", res)
	}
	if res.FenceLost(conds) {
		t.Fatalf("the create-revision condition held; FenceLost says otherwise")
	}
	if _, err := c.Txn(ctx, nil, []store.Op{store.Put("cas/d", nil), store.Delete("cas/d")}); err == nil {
		t.Fatalf("a txn naming one key twice was accepted")
	}
	if _, err := c.Txn(ctx, nil, []store.Op{store.DeletePrefix("cas/"), store.Put("cas/e", nil)}); err == nil {
		t.Fatalf("a txn putting a key under a prefix it deletes was accepted")
	}
}

func testWatch(t *testing.T, h Harness) {
	c := h.Connect(t)
	r1 := mustPut(t, c, "w/a", "1")
	w := c.Watch("w/", 0)
	defer w.Close()
	b := mustNext(t, w)
	if got, want := summary(b), fmt.Sprintf("reset=true rev=%d put(w/a=1@%d c%d v1)", b.Revision, r1, r1); got != want || b.Revision < r1 {
		t.Fatalf("first batch %s, want %s", got, want)
	}
	r2 := mustPut(t, c, "w/b", "2")
	mustPut(t, c, "elsewhere", "not watched")
	r3 := mustTxn(t, c, nil, store.Delete("w/a"), store.Put("w/b", []byte("3"))).Revision
	got := flatten(t, collect(t, w, r3))
	want := []string{
		fmt.Sprintf("put(w/b=2@%d c%d v1)", r2, r2),
		fmt.Sprintf("del(w/a@%d)", r3),
		fmt.Sprintf("put(w/b=3@%d c%d v2)", r3, r2),
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changes %v, want %v", got, want)
	}
	// A watch from a past revision replays exactly what followed it.
	w2 := c.Watch("w/", r2)
	defer w2.Close()
	if replay := flatten(t, collect(t, w2, r3)); fmt.Sprint(replay) != fmt.Sprint(want) {
		t.Fatalf("replay from %d = %v, want %v", r2, replay, want)
	}
}

// flatten lists the changes of batches that must not be resets.
func flatten(t *testing.T, bs []store.Batch) []string {
	t.Helper()
	var out []string
	for _, b := range bs {
		if b.Reset {
			t.Fatalf("unexpected reset: %s", summary(b))
		}
		for _, c := range b.Changes {
			out = append(out, change(c))
		}
	}
	return out
}

// collect reads batches until one reaches rev.
func collect(t *testing.T, w store.Watch, rev int64) []store.Batch {
	t.Helper()
	var out []store.Batch
	for {
		b := mustNext(t, w)
		out = append(out, b)
		if b.Revision >= rev {
			return out
		}
	}
}

func testWatchResume(t *testing.T, h Harness) {
	watcher, writer := h.Connect(t), h.Connect(t)
	start := mustPut(t, writer, "resume/a", "0")
	w := watcher.Watch("resume/", start+1)
	defer w.Close()
	r1 := mustPut(t, writer, "resume/a", "1")
	if b := collect(t, w, r1); summary(b[len(b)-1]) != fmt.Sprintf("reset=false rev=%d put(resume/a=1@%d c%d v2)", r1, r1, start) {
		t.Fatalf("before the disconnection: %s", summary(b[len(b)-1]))
	}
	h.Partition(t, watcher, true)
	var want []string
	for i := 2; i <= 4; i++ {
		r := mustPut(t, writer, "resume/a", fmt.Sprint(i))
		want = append(want, fmt.Sprintf("put(resume/a=%d@%d c%d v%d)", i, r, start, i+1))
	}
	last := mustTxn(t, writer, nil, store.Delete("resume/a")).Revision
	want = append(want, fmt.Sprintf("del(resume/a@%d)", last))
	h.Partition(t, watcher, false)
	if got := flatten(t, collect(t, w, last)); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after reconnecting the watch delivered %v, want %v", got, want)
	}
}

func testWatchCompaction(t *testing.T, h Harness) {
	watcher, writer := h.Connect(t), h.Connect(t)
	first := mustPut(t, writer, "compact/a", "1")
	mustPut(t, writer, "compact/b", "1")
	w := watcher.Watch("compact/", first)
	defer w.Close()
	r := mustPut(t, writer, "compact/c", "1")
	collect(t, w, r)
	h.Partition(t, watcher, true)
	mustTxn(t, writer, nil, store.Delete("compact/a"))
	rb := mustPut(t, writer, "compact/b", "2")
	rd := mustPut(t, writer, "compact/d", "1")
	h.Compact(t, rd)
	h.Partition(t, watcher, false)
	b := mustNext(t, w)
	want := fmt.Sprintf("reset=true rev=%d put(compact/b=2@%d c%d v2) put(compact/c=1@%d c%d v1) put(compact/d=1@%d c%d v1)",
		b.Revision, rb, first+1, r, r, rd, rd)
	if summary(b) != want || b.Revision < rd {
		t.Fatalf("after compaction: %s, want %s", summary(b), want)
	}
	// The watch goes on from the snapshot.
	re := mustPut(t, writer, "compact/e", "1")
	if b := collect(t, w, re); b[len(b)-1].Reset {
		t.Fatalf("reset twice: %s", summary(b[len(b)-1]))
	}
	// A watch opened from a compacted revision starts with a snapshot too.
	w2 := watcher.Watch("compact/", first)
	defer w2.Close()
	if b := mustNext(t, w2); !b.Reset || len(b.Changes) != 4 {
		t.Fatalf("watch from compacted revision %d: %s", first, summary(b))
	}
}

func testLeaseExpiry(t *testing.T, h Harness) {
	dying, observer := h.Connect(t), h.Connect(t)
	ctx := ctxT(t)
	sess, err := dying.NewSession(ctx, TTL)
	if err != nil {
		t.Fatal(err)
	}
	res := mustTxn(t, dying, nil, store.PutLease("live/proxy-1", []byte("10.0.0.1"), sess.Lease()), store.Put("live/static", []byte("stays")))
	w := observer.Watch("live/", res.Revision+1)
	defer w.Close()
	if row := mustGet(t, observer, "live/proxy-1"); row.Lease != sess.Lease() {
		t.Fatalf("leased row = %+v, want lease %x", row, sess.Lease())
	}
	// Kept alive for longer than the TTL while the process lives.
	h.Elapse(t, 3*TTL*time.Second)
	if !mustGet(t, observer, "live/proxy-1").Exists() {
		t.Fatalf("a kept-alive lease expired")
	}
	_ = dying.Close() // the process dies: no revoke, the lease runs out
	select {
	case <-sess.Done():
	case <-time.After(wait):
		t.Fatalf("session not done after its client closed")
	}
	h.Elapse(t, 2*TTL*time.Second)
	b := mustNext(t, w)
	if got, want := summary(b), fmt.Sprintf("reset=false rev=%d del(live/proxy-1@%d)", b.Revision, b.Revision); got != want {
		t.Fatalf("expiry seen as %s, want %s", got, want)
	}
	if !mustGet(t, observer, "live/static").Exists() {
		t.Fatalf("a row without lease went with the lease")
	}
}

// testGrantedLease: a granted lease is not kept alive although its client
// lives; a row put again with a newer lease leaves the old one and lives
// as long as the new one.
func testGrantedLease(t *testing.T, h Harness) {
	c, observer := h.Connect(t), h.Connect(t)
	ctx := ctxT(t)
	short, err := c.GrantLease(ctx, TTL)
	if err != nil {
		t.Fatal(err)
	}
	// Five TTLs leave the real-time store room to expire the short lease
	// on a loaded machine well before the long one.
	long, err := c.GrantLease(ctx, 5*TTL)
	if err != nil {
		t.Fatal(err)
	}
	if short == long || short == 0 || long == 0 {
		t.Fatalf("leases %x and %x: want two distinct ids", short, long)
	}
	mustTxn(t, c, nil, store.PutLease("marks/a", []byte("1"), short), store.PutLease("marks/b", []byte("1"), short))
	mustTxn(t, c, nil, store.PutLease("marks/b", []byte("2"), long))
	if row := mustGet(t, observer, "marks/b"); row.Lease != long {
		t.Fatalf("rewritten row = %+v, want lease %x", row, long)
	}
	h.Elapse(t, TTL*time.Second)
	poll.Until(t, wait, "the short lease's row to go", func() bool { return !mustGet(t, observer, "marks/a").Exists() })
	if !mustGet(t, observer, "marks/b").Exists() {
		t.Fatalf("a row moved to a longer lease went with the first one")
	}
	h.Elapse(t, 4*TTL*time.Second)
	poll.Until(t, wait, "the long lease's row to go", func() bool { return !mustGet(t, observer, "marks/b").Exists() })
	if _, err := c.GrantLease(ctx, 0); err == nil {
		t.Fatalf("a lease of 0s was granted")
	}
}

func testSessionClose(t *testing.T, h Harness) {
	c := h.Connect(t)
	ctx := ctxT(t)
	sess, err := c.NewSession(ctx, 60)
	if err != nil {
		t.Fatal(err)
	}
	mustTxn(t, c, nil, store.PutLease("bye/row", []byte("x"), sess.Lease()))
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if mustGet(t, c, "bye/row").Exists() {
		t.Fatalf("row of a revoked lease still there")
	}
	<-sess.Done()
	if err := sess.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := c.Txn(ctx, nil, []store.Op{store.PutLease("bye/row", nil, sess.Lease())}); err == nil {
		t.Fatalf("a put with a revoked lease was accepted")
	}
}

func testClose(t *testing.T, h Harness) {
	c := h.Connect(t)
	mustPut(t, c, "close/a", "1")
	w := c.Watch("close/", 0)
	mustNext(t, w)
	w.Close()
	w.Close()
	if _, err := w.Next(ctxT(t)); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Next after Watch.Close: %v, want ErrClosed", err)
	}
	// A watch blocked in Next ends when its client closes.
	w2 := c.Watch("close/", 0)
	mustNext(t, w2)
	ended := make(chan error, 1)
	go func() { _, err := w2.Next(ctxT(t)); ended <- err }()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	select {
	case err := <-ended:
		if !errors.Is(err, store.ErrClosed) {
			t.Fatalf("blocked Next after the client closed: %v, want ErrClosed", err)
		}
	case <-time.After(wait):
		t.Fatalf("a blocked Next outlived its client")
	}
	if _, _, err := c.Get(ctxT(t), "close/a"); !errors.Is(err, store.ErrClosed) {
		t.Fatalf("Get after Close: %v, want ErrClosed", err)
	}
}
