package locsvc_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// updater stands in for the router: it keeps what Update told it, and
// acknowledges at once unless held.
type updater struct {
	mu      sync.Mutex // guards the fields below
	locs    map[string]loccache.Location
	changes int
	hold    bool
	held    []func()
}

func newUpdater() *updater { return &updater{locs: map[string]loccache.Location{}} }

func (u *updater) Update(cs []loccache.Change, done func()) {
	u.mu.Lock()
	for _, c := range cs {
		u.changes++
		if c.Deleted {
			delete(u.locs, c.Name)
		} else {
			u.locs[c.Name] = c.Loc
		}
	}
	if u.hold {
		u.held = append(u.held, done)
		done = nil
	}
	u.mu.Unlock()
	if done != nil {
		done()
	}
}

func (u *updater) get(name string) (loccache.Location, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	l, ok := u.locs[name]
	return l, ok
}

func (u *updater) release() {
	u.mu.Lock()
	held := u.held
	u.held, u.hold = nil, false
	u.mu.Unlock()
	for _, d := range held {
		d()
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// start runs a service of region on its own client of env.
func start(t *testing.T, env harness.Env, region, member string, u locsvc.Updater, tune func(*locsvc.Config)) (*locsvc.Service, store.Store) {
	t.Helper()
	c := env.Connect(t)
	cfg := locsvc.Config{Region: region, Member: member, CounterInterval: time.Hour, CreateTimeout: 10 * time.Second}
	if tune != nil {
		tune(&cfg)
	}
	s, err := locsvc.New(cfg, c)
	if err != nil {
		t.Fatal(err)
	}
	if u == nil {
		s.Start(nil) // a nil *updater would be a non-nil Updater
	} else {
		s.Start(u)
	}
	t.Cleanup(func() {
		if err := s.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	poll.Until(t, harness.Wait, "the service to be ready", s.Ready)
	return s, c
}

// ack reads member's acknowledged revision (-1: none, or its lease gone).
func ack(t *testing.T, c store.Store, member string) int64 {
	t.Helper()
	row, _, err := c.Get(ctxT(t), locsvc.NewLayout("").AckKey(member))
	if err != nil || !row.Exists() {
		return -1
	}
	n, err := strconv.ParseInt(string(row.Value), 10, 64)
	if err != nil {
		t.Fatalf("ack row %q: %v", row.Value, err)
	}
	return n
}

// leader is a placement leadership of the test on a client of env.
func leader(t *testing.T, env harness.Env) (*loctable.Table, store.Leadership) {
	t.Helper()
	c := env.Connect(t)
	sess, err := c.NewSession(ctxT(t), 10)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Campaign(ctxT(t), sess, locsvc.ElectionName, "test")
	if err != nil {
		t.Fatal(err)
	}
	return loctable.New(c, ""), l
}

func each(t *testing.T, f func(t *testing.T, env harness.Env)) {
	for name, mk := range harness.Stores() {
		t.Run(name, func(t *testing.T) { f(t, mk(t)) })
	}
}

// TestResolve: a read answers, coalesced and cached; the watch carries a
// migration's states to the router and to the shared cache; the service
// acknowledges the revision once the router applied it.
func TestResolve(t *testing.T) { each(t, testResolve) }

func testResolve(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	tb, l := leader(t, env)
	for i := 0; i < 2; i++ {
		if _, _, err := tb.Create(ctx, l, fmt.Sprint("u: ", i), "eu", t0); err != nil {
			t.Fatal(err)
		}
	}
	u := newUpdater()
	s, c := start(t, env, "eu", "m1", u, nil)
	reads := s.Stats().Reads

	// Twenty loops miss on one μ-shard at once: one read.
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			loc, err := harness.Resolve(t, s, "u: 0", false)
			if err == nil && (loc.Owner != "eu" || loc.Epoch != 1 || loc.State != loctable.Stable) {
				err = fmt.Errorf("resolved %+v", loc)
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := s.Stats().Reads - reads; got != 1 {
		t.Fatalf("%d reads for 20 concurrent Resolves of one μ-shard", got)
	}

	// A migration: the router sees Prepare (the source still serves),
	// then Migrating; the shared cache follows without a read.
	_, rev, err := tb.Migrate(ctx, l, "u: 0", 1, "us", "test", t0)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "the Prepare row at the router", func() bool {
		loc, ok := u.get("u: 0")
		return ok && loc.State == loctable.Prepare && loc.Serving() == "eu" && loc.Owner == "us"
	})
	poll.Until(t, harness.Wait, "the ack of the Prepare write", func() bool { return ack(t, c, "m1") >= rev })
	reads = s.Stats().Reads
	if loc, err := harness.Resolve(t, s, "u: 0", false); err != nil || loc.State != loctable.Prepare || loc.Epoch != 2 {
		t.Fatalf("cached after the watch: %+v %v", loc, err)
	}
	if _, _, err := tb.PromoteAt(ctx, l, "u: 0", 2, t0); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "Migrating at the router", func() bool {
		loc, _ := u.get("u: 0")
		return loc.State == loctable.Migrating && loc.Serving() == "us"
	})
	if loc, err := harness.Resolve(t, s, "u: 0", true); err != nil || loc.State != loctable.Migrating {
		t.Fatalf("fresh: %+v %v", loc, err)
	}
	if got := s.Stats().Reads - reads; got != 1 {
		t.Fatalf("%d reads for one cached and one fresh Resolve, want 1", got)
	}

	// The ack waits for the router.
	u.mu.Lock()
	u.hold = true
	u.mu.Unlock()
	_, rev, err = tb.Settle(ctx, l, "u: 0", 2)
	if err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "the Stable row at the router", func() bool {
		loc, _ := u.get("u: 0")
		return loc.State == loctable.Stable
	})
	if a := ack(t, c, "m1"); a >= rev {
		t.Fatalf("acknowledged %d before the router applied %d", a, rev)
	}
	u.release()
	poll.Until(t, harness.Wait, "the ack after the router applied", func() bool { return ack(t, c, "m1") >= rev })
	if s.Stats().Applied < rev {
		t.Fatalf("stats: applied %d < %d", s.Stats().Applied, rev)
	}
}

// TestCreate: two strata of different regions see a new μ-shard at once;
// the creator (standing in for the placement service here) makes one row,
// and both learn the same owner. Without a creator, Resolve gives up.
func TestCreate(t *testing.T) { each(t, testCreate) }

func testCreate(t *testing.T, env harness.Env) {
	a, _ := start(t, env, "eu", "a", nil, nil)
	b, _ := start(t, env, "us", "b", nil, func(c *locsvc.Config) { c.CreateTimeout = 300 * time.Millisecond })
	if _, err := harness.Resolve(t, b, "u: lonely", false); !errors.Is(err, locsvc.ErrCreateTimeout) {
		t.Fatalf("no placement service: %v", err)
	}
	creator(t, env)
	var wg sync.WaitGroup
	locs := make([]loccache.Location, 2)
	errs := make([]error, 2)
	for i, s := range []*locsvc.Service{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); locs[i], errs[i] = harness.Resolve(t, s, "u: new", false) }()
	}
	wg.Wait()
	// b's create timeout is short: it may have lost the race with the
	// creator; it then asks again.
	if errors.Is(errs[1], locsvc.ErrCreateTimeout) {
		locs[1], errs[1] = harness.Resolve(t, b, "u: new", false)
	}
	if errs[0] != nil || errs[1] != nil || locs[0] != locs[1] || locs[0].Epoch != 1 {
		t.Fatalf("a: %+v %v; b: %+v %v", locs[0], errs[0], locs[1], errs[1])
	}
	if a.Stats().Creates+b.Stats().Creates < 1 {
		t.Fatal("no create request")
	}
}

// creator creates the row of every create request, as the placement
// leader does (placesvc tests the real one).
func creator(t *testing.T, env harness.Env) {
	c := env.Connect(t)
	lay := locsvc.NewLayout("")
	tb := loctable.New(c, "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); <-done })
	go func() {
		defer close(done)
		w := c.Watch(lay.CreatePrefix(), 0)
		defer w.Close()
		for {
			b, err := w.Next(ctx)
			if err != nil {
				return
			}
			for _, ch := range b.Changes {
				if ch.Deleted {
					continue
				}
				name := ch.Row.Key[len(lay.CreatePrefix()):]
				if _, _, err := tb.Create(ctx, nil, name, string(ch.Row.Value), t0); err == nil {
					_, _ = store.DeleteRow(ctx, c, ch.Row.Key)
				}
			}
		}
	}()
}

// TestStoreDown: cut off from the store, a strata answers cached μ-shards,
// fails unknown ones at once after the first failure, acknowledges nothing
// new, and recovers when the store is back.
func TestStoreDown(t *testing.T) { each(t, testStoreDown) }

func testStoreDown(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	tb, l := leader(t, env)
	for _, n := range []string{"u: known", "u: unknown"} {
		if _, _, err := tb.Create(ctx, l, n, "eu", t0); err != nil {
			t.Fatal(err)
		}
	}
	s, c := start(t, env, "eu", "m1", newUpdater(), func(c *locsvc.Config) { c.ReadTimeout = 300 * time.Millisecond })
	if _, err := harness.Resolve(t, s, "u: known", false); err != nil {
		t.Fatal(err)
	}
	env.Partition(t, c, true)
	if _, err := harness.Resolve(t, s, "u: unknown", false); err == nil {
		t.Fatal("resolved an uncached μ-shard without the store")
	}
	reads := s.Stats().Reads
	start := time.Now()
	if _, err := harness.Resolve(t, s, "u: unknown", false); !errors.Is(err, locsvc.ErrStoreDown) {
		t.Fatalf("second try while down: %v, want ErrStoreDown", err)
	}
	if s.Stats().Reads != reads || time.Since(start) > 250*time.Millisecond {
		t.Fatalf("the second try read the store (%d reads) or waited %v", s.Stats().Reads-reads, time.Since(start))
	}
	if loc, err := harness.Resolve(t, s, "u: known", false); err != nil || loc.Owner != "eu" {
		t.Fatalf("cached μ-shard while the store is down: %+v %v", loc, err)
	}
	env.Partition(t, c, false)
	poll.Until(t, harness.Wait, "the unknown μ-shard once the store is back", func() bool {
		_, err := harness.Resolve(t, s, "u: unknown", false)
		return err == nil
	})
}

// TestCompactionReset: a watch that fell behind a compaction re-reads the
// whole table and hands the router every row, then acknowledges it.
func TestCompactionReset(t *testing.T) { each(t, testCompactionReset) }

func testCompactionReset(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	tb, l := leader(t, env)
	u := newUpdater()
	_, c := start(t, env, "eu", "m1", u, nil)
	env.Partition(t, c, true)
	var rev int64
	for i := 0; i < 5; i++ {
		e, _, err := tb.Create(ctx, l, fmt.Sprint("u: c", i), "us", t0)
		if err != nil || e.Owner != "us" {
			t.Fatal(err)
		}
	}
	_, rev, err := tb.Migrate(ctx, l, "u: c0", 1, "eu", "test", t0)
	if err != nil {
		t.Fatal(err)
	}
	env.Compact(t, rev)
	env.Partition(t, c, false)
	poll.Until(t, harness.Wait, "every row at the router", func() bool {
		for i := 0; i < 5; i++ {
			if _, ok := u.get(fmt.Sprint("u: c", i)); !ok {
				return false
			}
		}
		loc, _ := u.get("u: c0")
		return loc.State == loctable.Prepare
	})
	poll.Until(t, harness.Wait, "the ack past the compaction", func() bool { return ack(t, c, "m1") >= rev })
}
