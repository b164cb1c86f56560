package loctable

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/control/store/etcdstore/etcdharness"
	"github.com/strata-cache/strata/control/store/storetest"
	"github.com/strata-cache/strata/internal/etcdtest"
)

// The table runs on any client of either store.
var (
	_ Store = (*store.MemoryClient)(nil)
	_ Store = (*etcdstore.Store)(nil)
)

func memoryHarness(t *testing.T) storetest.Harness {
	m := store.NewMemory(store.MemoryOptions{})
	return storetest.Harness{Connect: func(t *testing.T) store.Store {
		c := m.Connect()
		t.Cleanup(func() { _ = c.Close() })
		return c
	}}
}

// etcdHarness starts a real etcd; it fails, rather than skips, without
// the binary under CI (etcdtest decides).
func etcdHarness(t *testing.T) storetest.Harness {
	return etcdharness.New(t, etcdtest.Start(t), etcdstore.Config{})
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestTable(t *testing.T) {
	for name, h := range map[string]func(*testing.T) storetest.Harness{"memory": memoryHarness, "etcd": etcdHarness} {
		t.Run(name, func(t *testing.T) {
			h := h(t) // one store for the subtests: they use distinct names
			t.Run("CreateOnce", func(t *testing.T) { testCreateOnce(t, h) })
			t.Run("CreateRace", func(t *testing.T) { testCreateRace(t, h) })
			t.Run("CreateFenced", func(t *testing.T) { testCreateFenced(t, h) })
			t.Run("CorruptRow", func(t *testing.T) { testCorruptRow(t, h) })
			t.Run("MigrateSettle", func(t *testing.T) { testMigrateSettle(t, h) })
			t.Run("MigrateRace", func(t *testing.T) { testMigrateRace(t, h) })
		})
	}
}

func testCreateOnce(t *testing.T, h storetest.Harness) {
	ctx := ctxT(t)
	tb := New(h.Connect(t), "")
	if _, ok, err := tb.Get(ctx, "u: 1"); ok || err != nil {
		t.Fatalf("a row before Create: %v %v", ok, err)
	}
	e, created, err := tb.Create(ctx, nil, "u: 1", "eu", now)
	want := Entry{Owner: "eu", Epoch: 1, State: Stable, History: []Move{{Epoch: 1, At: now, To: "eu", Reason: "created"}}}
	if err != nil || !created || !equal(e, want) {
		t.Fatalf("create: %+v %v %v", e, created, err)
	}
	e, created, err = tb.Create(ctx, nil, "u: 1", "us", now.Add(time.Hour), store.Put("side/1", []byte("x")))
	if err != nil || created || !equal(e, want) {
		t.Fatalf("second create: %+v %v %v; want the first row, not created", e, created, err)
	}
	// The operations that go with a creation apply with it, and only then.
	c := tb.s
	if _, _, err := tb.Create(ctx, nil, "u: 1b", "eu", now, store.Put("side/2", []byte("x"))); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"side/1": false, "side/2": true} {
		if row, _, err := c.Get(ctx, key); err != nil || row.Exists() != want {
			t.Fatalf("%s exists: %v (%v), want %v", key, row.Exists(), err, want)
		}
	}
	if e, ok, err := tb.Get(ctx, "u: 1"); !ok || err != nil || !equal(e, want) {
		t.Fatalf("get: %+v %v %v", e, ok, err)
	}
	if _, _, err := tb.Create(ctx, nil, "u: 2", "", now); err == nil {
		t.Fatal("created a row without an owner")
	}
}

// testCreateRace: proxies in many processes report a new μ-shard at once,
// each proposing its own region; exactly one row is created and all learn
// its owner.
func testCreateRace(t *testing.T, h storetest.Harness) {
	const n = 8
	ctx := ctxT(t)
	tables := make([]*Table, n)
	for i := range tables {
		tables[i] = New(h.Connect(t), "")
	}
	for round := 0; round < 5; round++ {
		name := fmt.Sprintf("g: race%d", round)
		var wg sync.WaitGroup
		entries := make([]Entry, n)
		created := make([]bool, n)
		errs := make([]error, n)
		start := make(chan struct{})
		for i := range tables {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				entries[i], created[i], errs[i] = tables[i].Create(ctx, nil, name, fmt.Sprint("r", i), now)
			}()
		}
		close(start)
		wg.Wait()
		winners := 0
		for i := range tables {
			if errs[i] != nil {
				t.Fatalf("%s: creator %d: %v", name, i, errs[i])
			}
			if created[i] {
				winners++
				if entries[i].Owner != fmt.Sprint("r", i) {
					t.Fatalf("%s: creator %d won with owner %q", name, i, entries[i].Owner)
				}
			}
			if !equal(entries[i], entries[0]) {
				t.Fatalf("%s: creators disagree: %+v and %+v", name, entries[i], entries[0])
			}
		}
		if winners != 1 {
			t.Fatalf("%s: %d creators won", name, winners)
		}
	}
}

// testCreateFenced: the placement service creates under its leadership,
// and a deposed one creates nothing.
func testCreateFenced(t *testing.T, h storetest.Harness) {
	ctx := ctxT(t)
	c := h.Connect(t)
	sess, err := c.NewSession(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Campaign(ctx, sess, "locality-placement", "p1")
	if err != nil {
		t.Fatal(err)
	}
	tb := New(c, "")
	if _, created, err := tb.Create(ctx, l, "u: f1", "eu", now); err != nil || !created {
		t.Fatalf("leader's create: %v %v", created, err)
	}
	if e, created, err := tb.Create(ctx, l, "u: f1", "us", now); err != nil || created || e.Owner != "eu" {
		t.Fatalf("leader's second create: %+v %v %v", e, created, err)
	}
	if err := l.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Create(ctx, l, "u: f2", "eu", now); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("deposed leader's create: %v, want ErrFenced", err)
	}
	if _, ok, err := tb.Get(ctx, "u: f2"); ok || err != nil {
		t.Fatalf("a deposed leader wrote a row: %v %v", ok, err)
	}
}

func testCorruptRow(t *testing.T, h storetest.Harness) {
	ctx := ctxT(t)
	c := h.Connect(t)
	tb := New(c, "")
	if _, err := c.Txn(ctx, nil, []store.Op{store.Put(tb.Key("u: bad"), []byte("L\x01junk"))}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.Create(ctx, nil, "u: bad", "eu", now); !errors.Is(err, errCorrupt) {
		t.Fatalf("create over a corrupt row: %v", err)
	}
	if _, _, err := tb.Get(ctx, "u: bad"); !errors.Is(err, errCorrupt) {
		t.Fatalf("get of a corrupt row: %v", err)
	}
}

// lead returns a table on a fresh client and a leadership of the
// placement election.
func lead(t *testing.T, h storetest.Harness, who string) (*Table, store.Leadership) {
	ctx := ctxT(t)
	c := h.Connect(t)
	sess, err := c.NewSession(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Campaign(ctx, sess, "locality-placement", who)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Resign(context.Background()) })
	return New(c, ""), l
}

func testMigrateSettle(t *testing.T, h storetest.Harness) {
	ctx := ctxT(t)
	tb, l := lead(t, h, "p1")
	const name = "u: m1"
	if _, _, err := tb.Create(ctx, l, name, "eu", now); err != nil {
		t.Fatal(err)
	}
	later := now.Add(7 * time.Hour)
	e, rev, err := tb.Migrate(ctx, l, name, 1, "us", "better", later)
	want := Entry{Owner: "us", Epoch: 2, State: Prepare, Source: "eu", History: []Move{
		{Epoch: 1, At: now, To: "eu", Reason: "created"},
		{Epoch: 2, At: later, From: "eu", To: "us", Reason: "better"}}}
	if err != nil || !equal(e, want) || rev == 0 {
		t.Fatalf("migrate: %+v %d %v", e, rev, err)
	}
	if got, _, _ := tb.Get(ctx, name); !equal(got, want) {
		t.Fatalf("stored: %+v", got)
	}
	if loc := got(t, tb, name).Location(); loc.Serving() != "eu" || loc.State != Prepare {
		t.Fatalf("Prepare serves from %s (%+v), want the source eu", loc.Serving(), loc)
	}
	journal(t, tb, Pending{Name: name, Epoch: 2})
	if _, _, err := tb.Migrate(ctx, l, name, 1, "ap", "better", later); !errors.Is(err, ErrEpoch) {
		t.Fatalf("a move from a past epoch: %v", err)
	}
	if _, _, err := tb.Migrate(ctx, l, name, 2, "ap", "better", later); !errors.Is(err, ErrEpoch) {
		t.Fatalf("a move during Prepare: %v", err)
	}
	if _, _, err := tb.Settle(ctx, l, name, 2); !errors.Is(err, ErrEpoch) {
		t.Fatalf("settling a move still in Prepare: %v", err)
	}
	if _, _, err := tb.PromoteAt(ctx, l, name, 1, later); !errors.Is(err, ErrEpoch) {
		t.Fatalf("promoting a past epoch: %v", err)
	}
	promoted := later.Add(time.Minute)
	want.State, want.History[1].At = Migrating, promoted
	var prev int64
	for i := 0; i < 2; i++ { // the second promote repeats the first, and changes nothing
		e, rev, err := tb.PromoteAt(ctx, l, name, 2, promoted)
		if i == 1 {
			e, rev, err = tb.Promote(ctx, l, name, 2)
		}
		if err != nil || !equal(e, want) || (i == 1 && rev != prev) {
			t.Fatalf("promote %d: %+v %d %v", i, e, rev, err)
		}
		prev = rev
	}
	journal(t, tb, Pending{Name: name, Epoch: 2})
	if _, _, err := tb.Migrate(ctx, l, name, 2, "ap", "better", later); !errors.Is(err, ErrEpoch) {
		t.Fatalf("a move during the grace window: %v", err)
	}
	if _, _, err := tb.Settle(ctx, l, name, 1); !errors.Is(err, ErrEpoch) {
		t.Fatalf("settling a past epoch: %v", err)
	}
	want.State, want.Source = Stable, ""
	for i := 0; i < 2; i++ { // the second settle repeats the first
		if e, _, err := tb.Settle(ctx, l, name, 2); err != nil || !equal(e, want) {
			t.Fatalf("settle %d: %+v %v", i, e, err)
		}
	}
	journal(t, tb)
	if _, _, err := tb.PromoteAt(ctx, l, name, 2, later); !errors.Is(err, ErrEpoch) {
		t.Fatalf("promoting a settled move: %v", err)
	}
	if e, _, err := tb.Migrate(ctx, l, name, 2, "eu", "pin", later); err != nil || e.Epoch != 3 || e.Source != "us" {
		t.Fatalf("move back: %+v %v", e, err)
	}
	if _, _, err := tb.Migrate(ctx, l, "u: none", 1, "eu", "", later); err == nil {
		t.Fatal("migrated a μ-shard without a row")
	}
	if err := l.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tb.PromoteAt(ctx, l, name, 3, later); !errors.Is(err, store.ErrFenced) {
		t.Fatalf("a deposed leader promoted: %v", err)
	}
	if _, err := tb.DropJournal(ctx, l, name); err != nil {
		t.Fatalf("dropping the entry of a move in Prepare: %v", err)
	}
	journal(t, tb, Pending{Name: name, Epoch: 3}) // still there: the row is not stable
}

func got(t *testing.T, tb *Table, name string) Entry {
	t.Helper()
	e, ok, err := tb.Get(context.Background(), name)
	if !ok || err != nil {
		t.Fatalf("get %s: %v %v", name, ok, err)
	}
	return e
}

// journal checks the unfinished migrations, among the names of this test
// (the store is shared by the subtests).
func journal(t *testing.T, tb *Table, want ...Pending) {
	t.Helper()
	all, err := tb.Journal(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var mine []Pending
	for _, p := range all {
		if strings.HasPrefix(p.Name, "u: m1") {
			mine = append(mine, p)
		}
	}
	if fmt.Sprint(mine) != fmt.Sprint(want) {
		t.Fatalf("journal %v, want %v", mine, want)
	}
}

// testMigrateRace: two deciders of one leader both move epoch 1; one wins,
// the other learns the epoch moved.
func testMigrateRace(t *testing.T, h storetest.Harness) {
	ctx := ctxT(t)
	tb, l := lead(t, h, "p1")
	for round := 0; round < 5; round++ {
		name := fmt.Sprintf("u: mr%d", round)
		if _, _, err := tb.Create(ctx, l, name, "eu", now); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make([]error, 2)
		start := make(chan struct{})
		for i, to := range []string{"us", "ap"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, _, errs[i] = tb.Migrate(ctx, l, name, 1, to, "better", now)
			}()
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			switch {
			case err == nil:
				won++
			case !errors.Is(err, ErrEpoch):
				t.Fatalf("%s: %v", name, err)
			}
		}
		if e, _, _ := tb.Get(ctx, name); won != 1 || e.Epoch != 2 {
			t.Fatalf("%s: %d moves won, epoch %d", name, won, e.Epoch)
		}
	}
}

// TestMarkerIsNoRow: a marker row lives among the rows (a watch of them
// delivers it in order) but Name refuses it, so no reader of the table
// takes it for a μ-shard.
func TestMarkerIsNoRow(t *testing.T) {
	tb := New(nil, "")
	k := tb.MarkerKey("join/m1")
	if !strings.HasPrefix(k, tb.RowsPrefix()) {
		t.Fatalf("marker key %q outside the rows %q", k, tb.RowsPrefix())
	}
	if name, ok := tb.Name(k); ok {
		t.Fatalf("Name(%q) = %q, true: a marker read as a μ-shard", k, name)
	}
	if name, ok := tb.Name(tb.Key("u: 1")); !ok || name != "u: 1" {
		t.Fatalf("Name of a row: %q %v", name, ok)
	}
}
