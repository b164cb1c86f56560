package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
)

// candidate is one process campaigning for a loop.
type candidate struct {
	c    store.Store
	sess store.Session
	won  chan store.Leadership
	err  chan error
}

// campaign starts a campaign of c for name in the background; the test
// owns the goroutine and it ends when the campaign does (won, failed, or
// the test's context ends).
func campaign(t *testing.T, c store.Store, name, value string) *candidate {
	t.Helper()
	sess, err := c.NewSession(ctxT(t), TTL)
	if err != nil {
		t.Fatalf("session: %v", err)
	}
	cd := &candidate{c: c, sess: sess, won: make(chan store.Leadership, 1), err: make(chan error, 1)}
	ctx := ctxT(t)
	go func() {
		l, err := c.Campaign(ctx, sess, name, value)
		if err != nil {
			cd.err <- err
			return
		}
		cd.won <- l
	}()
	return cd
}

func (cd *candidate) wins(t *testing.T) store.Leadership {
	t.Helper()
	select {
	case l := <-cd.won:
		return l
	case err := <-cd.err:
		t.Fatalf("campaign failed: %v", err)
	case <-time.After(wait):
		t.Fatalf("campaign not won within %v", wait)
	}
	return nil
}

// waits asserts the candidate has not won: its campaign is still blocked
// after the leader's row was observed, so it is second in line.
func (cd *candidate) waits(t *testing.T) {
	t.Helper()
	select {
	case <-cd.won:
		t.Fatalf("two leaders at once")
	case err := <-cd.err:
		t.Fatalf("campaign failed: %v", err)
	default:
	}
}

func leaderIs(t *testing.T, r store.Reader, name, value string) {
	t.Helper()
	poll.Until(t, wait, "leader "+value, func() bool {
		l, ok, err := store.Leader(ctxT(t), r, name)
		return err == nil && ok && string(l.Value) == value
	})
}

// waitCandidates polls until n candidates stand in the election.
func waitCandidates(t *testing.T, r store.Reader, name string, n int) {
	t.Helper()
	poll.Until(t, wait, fmt.Sprintf("%d candidates", n), func() bool {
		rows, _, err := r.List(ctxT(t), store.ElectionPrefix(name))
		return err == nil && len(rows) == n
	})
}

func testElectionFailover(t *testing.T, h Harness) {
	a, b, observer := h.Connect(t), h.Connect(t), h.Connect(t)
	lw := store.WatchLeader(observer, "assign")
	defer lw.Close()
	if _, ok, err := lw.Next(ctxT(t)); err != nil || ok {
		t.Fatalf("leader before any campaign: ok=%v err=%v", ok, err)
	}
	ca := campaign(t, a, "assign", "a")
	la := ca.wins(t)
	cb := campaign(t, b, "assign", "b")
	waitCandidates(t, observer, "assign", 2)
	cb.waits(t)
	leaderIs(t, observer, "assign", "a")
	if la.Key() != store.CandidateKey("assign", ca.sess.Lease()) {
		t.Fatalf("leader key %q, want the candidate key of its lease", la.Key())
	}

	_ = a.Close() // the leader's process dies
	select {
	case <-la.Done():
	case <-time.After(wait):
		t.Fatalf("a dead leader's leadership is not done")
	}
	h.Elapse(t, 2*TTL*time.Second)
	lb := cb.wins(t)
	leaderIs(t, observer, "assign", "b")
	if _, err := store.FencedTxn(ctxT(t), b, lb, nil, []store.Op{store.Put("maps/x", []byte("by b"))}); err != nil {
		t.Fatalf("the new leader's fenced write: %v", err)
	}
	// The observer ends at b and never sees anyone else, nor a after b.
	// (It may not see a at all: a leader watch reports the current leader
	// and can skip one that came and went between two reads.)
	var seen []string
	for len(seen) == 0 || seen[len(seen)-1] != "b" {
		l, ok, err := lw.Next(ctxT(t))
		if err != nil {
			t.Fatalf("leader watch: %v (saw %v)", err, seen)
		}
		if ok {
			seen = append(seen, string(l.Value))
		}
	}
	if got := fmt.Sprint(seen); got != "[a b]" && got != "[b]" {
		t.Fatalf("observed leaders %v, want a then b", seen)
	}
}

func testFenced(t *testing.T, h Harness) {
	a, b := h.Connect(t), h.Connect(t)
	la := campaign(t, a, "loop", "a").wins(t)
	cb := campaign(t, b, "loop", "b")
	if _, err := store.FencedTxn(ctxT(t), a, la, nil, []store.Op{store.Put("out", []byte("a1"))}); err != nil {
		t.Fatalf("leader's fenced write: %v", err)
	}
	// a is cut off (hung, partitioned), not dead: its lease runs out and b
	// takes over while a still believes it leads.
	h.Partition(t, a, true)
	h.Elapse(t, 2*TTL*time.Second)
	lb := cb.wins(t)
	if _, err := store.FencedTxn(ctxT(t), b, lb, nil, []store.Op{store.Put("out", []byte("b1"))}); err != nil {
		t.Fatalf("new leader's fenced write: %v", err)
	}
	h.Partition(t, a, false)
	var err error
	poll.Until(t, wait, "the deposed leader's write to be answered", func() bool {
		_, err = store.FencedTxn(ctxT(t), a, la, nil, []store.Op{store.Put("out", []byte("a2"))})
		return !errors.Is(err, store.ErrUnavailable)
	})
	if !errors.Is(err, store.ErrFenced) {
		t.Fatalf("deposed leader's write: %v, want ErrFenced", err)
	}
	if v := mustGet(t, b, "out"); string(v.Value) != "b1" {
		t.Fatalf("out = %q, want b1", v.Value)
	}
	select {
	case <-la.Done():
	case <-time.After(wait):
		t.Fatalf("the deposed leader was never told")
	}
}

func testResign(t *testing.T, h Harness) {
	a, b := h.Connect(t), h.Connect(t)
	la := campaign(t, a, "loop", "a").wins(t)
	cb := campaign(t, b, "loop", "b")
	waitCandidates(t, b, "loop", 2)
	if err := la.Resign(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	<-la.Done()
	lb := cb.wins(t) // no clock moved: resignation hands over at once
	leaderIs(t, a, "loop", "b")
	if _, err := store.FencedTxn(ctxT(t), a, la, nil, []store.Op{store.Put("out", nil)}); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("write after resigning: %v, want ErrFenced", err)
	}
	if _, err := store.FencedTxn(ctxT(t), b, lb, nil, []store.Op{store.Put("out", nil)}); err != nil {
		t.Fatal(err)
	}
}

func testPublish(t *testing.T, h Harness) {
	a := h.Connect(t)
	l := campaign(t, a, "maps", "a").wins(t)
	ctx := ctxT(t)
	if err := store.Publish(ctx, a, l, "map/l2", 2, []byte("skips 1")); !errors.Is(err, store.ErrStaleVersion) {
		t.Fatalf("first publication at version 2: %v, want stale version", err)
	}
	for v := uint64(1); v <= 3; v++ {
		if err := store.Publish(ctx, a, l, "map/l2", v, []byte(fmt.Sprint("map ", v))); err != nil {
			t.Fatalf("publish %d: %v", v, err)
		}
	}
	// A retry of a publication that got through (its reply lost) is fine.
	if err := store.Publish(ctx, a, l, "map/l2", 3, []byte("map 3")); err != nil {
		t.Fatalf("retry of version 3: %v", err)
	}
	var sv *store.StaleVersionError
	if err := store.Publish(ctx, a, l, "map/l2", 3, []byte("another map 3")); !errors.As(err, &sv) || sv.Stored != 3 {
		t.Fatalf("a different version 3: %v, want stale version reporting 3", err)
	}
	if err := store.Publish(ctx, a, l, "map/l2", 5, []byte("map 5")); !errors.As(err, &sv) || sv.Stored != 3 {
		t.Fatalf("version 5 over 3: %v, want stale version reporting 3", err)
	}
	got, err := store.ReadVersioned(ctx, a, "map/l2")
	if err != nil || got.Version != 3 || string(got.Payload) != "map 3" {
		t.Fatalf("read back %+v, %v", got, err)
	}
	// A versioned watch from version 0 starts with what is stored.
	vw := store.WatchVersioned(a, "map/l2", 0)
	defer vw.Close()
	if v, err := vw.Next(ctx); err != nil || v.Version != 3 {
		t.Fatalf("versioned watch first = %+v, %v", v, err)
	}
	// A row rewritten with an older version (a restore, a stray writer) is
	// never delivered; the next newer one is.
	if _, err := store.PutRow(ctx, a, "map/l2", store.EncodeVersioned(2, []byte("old"))); err != nil {
		t.Fatal(err)
	}
	if _, err := store.PutRow(ctx, a, "map/l2", store.EncodeVersioned(4, []byte("map 4"))); err != nil {
		t.Fatal(err)
	}
	if v, err := vw.Next(ctx); err != nil || v.Version != 4 || string(v.Payload) != "map 4" {
		t.Fatalf("versioned watch after an older row: %+v, %v; want version 4", v, err)
	}
}

// applier is a strata applying published maps: it records every version
// its versioned watch hands it, in order.
type applier struct {
	mu      sync.Mutex // guards applied
	applied []uint64
	done    chan struct{}
}

func startApplier(t *testing.T, c store.Store, key string) *applier {
	ap := &applier{done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	vw := store.WatchVersioned(c, key, 0)
	go func() { // owned by the test: stopped by the cleanup below
		defer close(ap.done)
		for {
			v, err := vw.Next(ctx)
			if err != nil {
				return
			}
			ap.mu.Lock()
			ap.applied = append(ap.applied, v.Version)
			ap.mu.Unlock()
		}
	}()
	t.Cleanup(func() { cancel(); vw.Close(); <-ap.done })
	return ap
}

func (ap *applier) versions() []uint64 {
	ap.mu.Lock()
	defer ap.mu.Unlock()
	return append([]uint64(nil), ap.applied...)
}

func (ap *applier) reaches(t *testing.T, v uint64) {
	t.Helper()
	poll.Until(t, wait, fmt.Sprintf("an applier to reach version %d", v), func() bool {
		vs := ap.versions()
		return len(vs) > 0 && vs[len(vs)-1] >= v
	})
	vs := ap.versions()
	for i := 1; i < len(vs); i++ {
		if vs[i] <= vs[i-1] {
			t.Fatalf("applier went from version %d to %d: %v", vs[i-1], vs[i], vs)
		}
	}
}

// testKilledMidPublication: the leader dies twice in the middle of a
// publication, once after its write landed but before it learned so, once
// before its write reached the store; each time the next leader continues
// from what is stored, and no applier ever goes back a version, including
// one that was disconnected and re-read the map after a compaction.
func testKilledMidPublication(t *testing.T, h Harness) {
	const key = "map/l2"
	a, b, c, observer, late := h.Connect(t), h.Connect(t), h.Connect(t), h.Connect(t), h.Connect(t)
	ap1 := startApplier(t, observer, key)
	ap2 := startApplier(t, late, key)

	la := campaign(t, a, "maps", "a").wins(t)
	cb := campaign(t, b, "maps", "b")
	for v := uint64(1); v <= 3; v++ {
		if err := store.Publish(ctxT(t), a, la, key, v, []byte(fmt.Sprint("a", v))); err != nil {
			t.Fatal(err)
		}
	}
	ap2.reaches(t, 3)
	h.Partition(t, late, true)

	// Version 4 lands, then a is cut off before it can record that, and
	// its lease runs out: from a's point of view the publication is
	// unacknowledged.
	_ = store.Publish(ctxT(t), a, la, key, 4, []byte("a4"))
	h.Partition(t, a, true)
	h.Elapse(t, 2*TTL*time.Second)
	lb := cb.wins(t)
	cur, err := store.ReadVersioned(ctxT(t), b, key)
	if err != nil || cur.Version != 4 {
		t.Fatalf("new leader reads %+v, %v; want version 4", cur, err)
	}
	// A new leader that computed from an older view loses the race
	// cleanly, re-reads and continues.
	var sv *store.StaleVersionError
	if err := store.Publish(ctxT(t), b, lb, key, 4, []byte("b4")); !errors.As(err, &sv) || sv.Stored != 4 {
		t.Fatalf("b publishing 4 over a's 4: %v", err)
	}
	if err := store.Publish(ctxT(t), b, lb, key, cur.Version+1, []byte("b5")); err != nil {
		t.Fatal(err)
	}
	// The deposed leader comes back and retries its next version: fenced.
	h.Partition(t, a, false)
	var err6 error
	poll.Until(t, wait, "the deposed leader to be answered", func() bool {
		err6 = store.Publish(ctxT(t), a, la, key, 6, []byte("a6"))
		return !errors.Is(err6, store.ErrUnavailable)
	})
	if !errors.Is(err6, store.ErrFenced) {
		t.Fatalf("deposed leader publishing 6 over 5: %v, want ErrFenced", err6)
	}

	// b is cut off before its version 6 reaches the store: c takes over
	// from version 5.
	cc := campaign(t, c, "maps", "c")
	waitCandidates(t, c, "maps", 2)
	h.Partition(t, b, true)
	short, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := store.Publish(short, b, lb, key, 6, []byte("b6")); err == nil {
		t.Fatalf("a publication through a cut connection succeeded")
	}
	h.Elapse(t, 2*TTL*time.Second)
	lc := cc.wins(t)
	cur, err = store.ReadVersioned(ctxT(t), c, key)
	if err != nil || cur.Version != 5 || string(cur.Payload) != "b5" {
		t.Fatalf("third leader reads %+v, %v; want b's version 5", cur, err)
	}
	if err := store.Publish(ctxT(t), c, lc, key, 6, []byte("c6")); err != nil {
		t.Fatal(err)
	}
	rev := mustGet(t, c, key).ModRevision
	h.Compact(t, rev)
	h.Partition(t, late, false)
	ap1.reaches(t, 6)
	ap2.reaches(t, 6)
	// reaches checked that each applier only went up; both end at 6.
	for _, ap := range []*applier{ap1, ap2} {
		if got := ap.versions(); got[len(got)-1] != 6 {
			t.Fatalf("an applier ended at %v", got)
		}
	}
}
