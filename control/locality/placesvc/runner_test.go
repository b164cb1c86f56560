package placesvc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/internal/harness"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/internal/poll"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func each(t *testing.T, f func(t *testing.T, env harness.Env)) {
	for name, mk := range harness.Stores() {
		t.Run(name, func(t *testing.T) { f(t, mk(t)) })
	}
}

// events collects what a runner did.
type events struct {
	mu  sync.Mutex // guards evs
	evs []string
}

func (e *events) add(evs []placesvc.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, ev := range evs {
		e.evs = append(e.evs, ev.String())
	}
}

func (e *events) list() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.evs...)
}

func (e *events) count(kind string) int {
	n := 0
	for _, ev := range e.list() {
		if strings.HasPrefix(ev, kind+" ") {
			n++
		}
	}
	return n
}

// runner starts a placement service candidate on its own client. Its
// clock is the memory store's (moved by Elapse) or the real one.
func runner(t *testing.T, env harness.Env, name string, grace time.Duration) (*placesvc.Runner, store.Store, *events) {
	t.Helper()
	c := env.Connect(t)
	now := time.Now
	if env.Clock != nil {
		now = env.Clock.Now
	}
	evs := &events{}
	r, err := placesvc.NewRunner(placesvc.Config{
		Policy:  placement.LocalityPolicy{MigrateAfter: time.Hour, MinInterval: 6 * time.Hour, MaxTTL: time.Hour},
		Regions: []string{"a", "b", "c"}, Grace: grace, Candidate: name, Tick: 10 * time.Millisecond,
		SessionTTL: 1, Timeout: time.Second, Now: now,
	}, c.(placesvc.RunnerStore), evs.add)
	if err != nil {
		t.Fatal(err)
	}
	r.Start()
	t.Cleanup(func() {
		if err := r.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r, c, evs
}

// member starts a location service that acknowledges every change at once
// (a router with nothing cached).
func member(t *testing.T, env harness.Env, region, id string) *locsvc.Service {
	t.Helper()
	s, err := locsvc.New(locsvc.Config{Region: region, Member: id, ReadTimeout: 300 * time.Millisecond, CounterInterval: time.Hour}, env.Connect(t))
	if err != nil {
		t.Fatal(err)
	}
	s.Start(ackAll{})
	t.Cleanup(func() { _ = s.Stop(context.Background()) })
	poll.Until(t, harness.Wait, id+" ready", s.Ready)
	return s
}

type ackAll struct{}

func (ackAll) Update(_ []loccache.Change, done func()) { done() }

// kill ends a process's client without resigning, and lets its session
// lapse.
func kill(t *testing.T, env harness.Env, c store.Store) {
	_ = c.Close()
	env.Elapse(t, 2*time.Second)
}

func row(t *testing.T, c store.Store, name string) loctable.Entry {
	e, _, _ := loctable.New(c, "").Get(ctxT(t), name)
	return e
}

// TestCreateRace: strata of two regions see one new μ-shard at once; the
// placement service creates one row and both learn its owner.
func TestCreateRace(t *testing.T) { each(t, testCreateRace) }

func testCreateRace(t *testing.T, env harness.Env) {
	_, _, evs := runner(t, env, "p1", time.Second)
	a, b := member(t, env, "a", "ma"), member(t, env, "b", "mb")
	for i := 0; i < 5; i++ {
		name := fmt.Sprint("u: r", i)
		var wg sync.WaitGroup
		locs := make([]loccache.Location, 2)
		errs := make([]error, 2)
		for j, s := range []*locsvc.Service{a, b} {
			wg.Add(1)
			go func() { defer wg.Done(); locs[j], errs[j] = harness.Resolve(t, s, name, false) }()
		}
		wg.Wait()
		if errs[0] != nil || errs[1] != nil || locs[0] != locs[1] || locs[0].Epoch != 1 {
			t.Fatalf("%s: a %+v %v, b %+v %v", name, locs[0], errs[0], locs[1], errs[1])
		}
	}
	poll.Until(t, harness.Wait, "the create events", func() bool { return evs.count("created") == 5 })
}

// TestLeaderKilledMidMigration: the placement leader dies with a move in
// Prepare, its successor recovers the move from the journal and promotes
// it once the acks are in, then dies with it Migrating, and a third
// settles it.
func TestLeaderKilledMidMigration(t *testing.T) { each(t, testLeaderKilled) }

func testLeaderKilled(t *testing.T, env harness.Env) {
	ctx := ctxT(t)
	lay := locsvc.NewLayout("")
	m := member(t, env, "a", "ma")
	r1, c1, _ := runner(t, env, "p1", time.Hour)
	poll.Until(t, harness.Wait, "p1 leads", func() bool { return r1.Leading() != nil })
	if _, err := harness.Resolve(t, m, "u: k", false); err != nil {
		t.Fatal(err)
	}
	// A member that has applied nothing holds the move in Prepare.
	adm := env.Connect(t)
	sess, err := adm.NewSession(ctx, 30)
	if err != nil {
		t.Fatal(err)
	}
	putAck := func(v string) {
		if _, err := adm.Txn(ctx, nil, []store.Op{store.PutLease(lay.AckKey("slow"), []byte(v), sess.Lease())}); err != nil {
			t.Fatal(err)
		}
	}
	putAck("0")
	if _, err := store.PutRow(ctx, adm, lay.MigrateKey("u: k"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "Prepare", func() bool { return row(t, adm, "u: k").State == loctable.Prepare })
	r2, c2, evs2 := runner(t, env, "p2", time.Hour)
	kill(t, env, c1)
	poll.Until(t, harness.Wait, "p2 leads", func() bool { return r2.Leading() != nil })
	// p1's figures outlive its leadership: the move it started.
	poll.Until(t, harness.Wait, "p1's leadership over", func() bool { return !r1.Stats().Leading })
	if st := r1.Stats(); st.Started != 1 || st.Decided != 1 || st.Settled != 0 || st.Returns != 0 {
		t.Fatalf("p1 after leading: %+v", st)
	}
	poll.Until(t, harness.Wait, "p2 recovered the move", func() bool { return evs2.count("recovered") == 1 })
	if e := row(t, adm, "u: k"); e.State != loctable.Prepare {
		t.Fatalf("promoted before the slow member acknowledged: %+v", e)
	}
	putAck("1000000")
	poll.Until(t, harness.Wait, "Migrating", func() bool { return row(t, adm, "u: k").State == loctable.Migrating })
	r3, _, evs3 := runner(t, env, "p3", 50*time.Millisecond)
	kill(t, env, c2)
	poll.Until(t, harness.Wait, "p3 settles the move", func() bool {
		env.Elapse(t, 10*time.Millisecond) // the memory clock: let the grace window pass
		return row(t, adm, "u: k").State == loctable.Stable
	})
	// p3 reports a round's events after its writes land: the row can read
	// Stable before the event that says so has been delivered.
	poll.Until(t, harness.Wait, "p3 reports the settle", func() bool { return evs3.count("stable") == 1 })
	e := row(t, adm, "u: k")
	if e.Owner != "b" || e.Epoch != 2 || len(e.History) != 2 || e.History[1].Reason != "manual" {
		t.Fatalf("after the move: %+v", e)
	}
	if j, _ := loctable.New(adm, "").Journal(ctx); len(j) != 0 {
		t.Fatalf("journal: %v", j)
	}
	if got := evs3.list(); len(got) != 2 || got[0] != "recovered u: k e2 b migrating" || got[1] != "stable u: k e2 b " {
		t.Fatalf("p3's events: %q", got)
	}
	if st := r3.Stats(); !st.Leading || st.Settled != 1 || st.Started != 0 {
		t.Fatalf("p3: %+v", st)
	}
}

// TestEtcdDown: with etcd killed, unknown μ-shards fail fast, cached ones
// are served and no move advances; with etcd back, all recovers.
func TestEtcdDown(t *testing.T) {
	env := harness.Etcd(t)
	r, _, evs := runner(t, env, "p1", 100*time.Millisecond)
	m := member(t, env, "a", "ma")
	poll.Until(t, harness.Wait, "p1 leads", func() bool { return r.Leading() != nil })
	if _, err := harness.Resolve(t, m, "u: known", false); err != nil {
		t.Fatal(err)
	}
	// The create's event is delivered after its write lands: wait for it,
	// or it would count as an act with etcd down.
	poll.Until(t, harness.Wait, "the create reported", func() bool { return evs.count("created") == 1 })
	env.Etcd.Kill()
	before := len(evs.list())
	if _, err := harness.Resolve(t, m, "u: unknown", false); err == nil {
		t.Fatal("resolved an unknown μ-shard with etcd down")
	}
	start := time.Now()
	if _, err := harness.Resolve(t, m, "u: unknown", false); !errors.Is(err, locsvc.ErrStoreDown) {
		t.Fatalf("second try: %v, want ErrStoreDown at once", err)
	}
	if d := time.Since(start); d > 250*time.Millisecond {
		t.Fatalf("the second try took %v", d)
	}
	if loc, err := harness.Resolve(t, m, "u: known", false); err != nil || loc.Owner != "a" {
		t.Fatalf("cached μ-shard with etcd down: %+v %v", loc, err)
	}
	if got := evs.list()[before:]; len(got) != 0 {
		t.Fatalf("the placement service acted with etcd down: %q", got)
	}
	env.Etcd.Restart(t)
	poll.Until(t, harness.Wait, "the unknown μ-shard created", func() bool {
		loc, err := harness.Resolve(t, m, "u: unknown", false)
		return err == nil && loc.Owner == "a"
	})
	adm := env.Connect(t)
	if _, err := store.PutRow(ctxT(t), adm, locsvc.NewLayout("").MigrateKey("u: known"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	poll.Until(t, harness.Wait, "the move after recovery", func() bool {
		e := row(t, adm, "u: known")
		return e.State == loctable.Stable && e.Owner == "c"
	})
}
