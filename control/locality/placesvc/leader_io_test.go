package placesvc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/loctable"
	"github.com/strata-cache/strata/control/store"
)

// gatedStore passes every call through to the store, but the first call
// of the kind armed ("Get", "List" or "Txn") announces itself on entered
// and waits for release: a store stuck in a round trip, held as long as
// the test likes.
type gatedStore struct {
	Store
	mu      sync.Mutex
	armed   string
	entered chan string
	release chan struct{}
}

var _ Store = (*gatedStore)(nil)

func newGatedStore(st Store) *gatedStore {
	return &gatedStore{Store: st, entered: make(chan string, 1), release: make(chan struct{})}
}

// arm makes the next call of kind block until release is closed.
func (g *gatedStore) arm(kind string) {
	g.mu.Lock()
	g.armed, g.release = kind, make(chan struct{})
	g.mu.Unlock()
}

func (g *gatedStore) gate(kind string) {
	g.mu.Lock()
	hit := g.armed == kind
	release := g.release
	if hit {
		g.armed = ""
	}
	g.mu.Unlock()
	if hit {
		g.entered <- kind
		<-release
	}
}

func (g *gatedStore) Get(ctx context.Context, key string) (store.Row, int64, error) {
	g.gate("Get")
	return g.Store.Get(ctx, key)
}

func (g *gatedStore) List(ctx context.Context, prefix string) ([]store.Row, int64, error) {
	g.gate("List")
	return g.Store.List(ctx, prefix)
}

func (g *gatedStore) Txn(ctx context.Context, conds []store.Cond, ops []store.Op) (store.TxnResult, error) {
	g.gate("Txn")
	return g.Store.Txn(ctx, conds, ops)
}

// newGatedLeader leads on a fresh memory store seen through a gate.
func newGatedLeader(t *testing.T) (*Leader, *gatedStore, *loctable.Table) {
	t.Helper()
	m := store.NewMemory(store.MemoryOptions{Now: func() time.Time { return t0 }})
	c := m.Connect()
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	sess, err := c.NewSession(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	l, err := c.Campaign(ctx, sess, locsvc.ElectionName, "t")
	if err != nil {
		t.Fatal(err)
	}
	g := newGatedStore(c)
	ld, err := NewLeader(Config{Policy: policy, Regions: []string{"a", "b", "c"}, Grace: grace, Seed: 7}, g, l)
	if err != nil {
		t.Fatal(err)
	}
	return ld, g, loctable.New(c, "")
}

// within fails the test unless f returns before the deadline.
func within(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited behind a round blocked in the store", what)
	}
}

type roundResult struct {
	evs []Event
	err error
}

// blockedRound starts a Round at now whose first store call of kind
// blocks, and returns once it is blocked there, with the channel its
// outcome arrives on after g.release is closed.
func blockedRound(t *testing.T, ld *Leader, g *gatedStore, kind string, now time.Time) <-chan roundResult {
	t.Helper()
	g.arm(kind)
	out := make(chan roundResult, 1)
	go func() {
		evs, err := ld.Round(context.Background(), now)
		out <- roundResult{evs, err}
	}()
	select {
	case <-g.entered:
	case <-time.After(5 * time.Second):
		t.Fatalf("the round never called the store's %s", kind)
	}
	return out
}

func finish(t *testing.T, g *gatedStore, res <-chan roundResult, want ...string) {
	t.Helper()
	close(g.release)
	var r roundResult
	select {
	case r = <-res:
	case <-time.After(5 * time.Second):
		t.Fatal("the round did not end once the store answered")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	got := make([]string, len(r.evs))
	for i, e := range r.evs {
		got[i] = e.String()
	}
	if len(got) != len(want) {
		t.Fatalf("round: %q, want %q", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("round: %q, want %q", got, want)
		}
	}
}

// TestAdminReadsDoNotWaitForStoreIO: while a round waits on the store
// (the read of a row it decides on, the write of a move, the write of a
// move's next step), the admin API's reads of the leader (Counters,
// InFlight, Settled, Capacities) and the runner's feed (Counts,
// SetMembers) return: no lock is held across a store call.
func TestAdminReadsDoNotWaitForStoreIO(t *testing.T) {
	ld, g, tb := newGatedLeader(t)
	ctx := context.Background()
	if _, err := ld.Recover(ctx, t0); err != nil {
		t.Fatal(err)
	}
	create(t, ld, "u: 1", "a", t0)
	ld.Counts("counters/b/1", 1, batch("b", t0, locsvc.Count{Name: "u: 1", N: 5, Remote: true}), t0)
	ld.Manual("u: 1", "b")
	at := t0.Add(time.Hour)

	reads := func(wantInFlight int) {
		t.Helper()
		within(t, "Counters", func() {
			if got := ld.Counters("u: 1", t0); got["b"] != 5 {
				t.Errorf("counters during the round: %v", got)
			}
		})
		within(t, "InFlight", func() {
			if n := ld.InFlight(); n != wantInFlight {
				t.Errorf("in flight during the round: %d, want %d", n, wantInFlight)
			}
		})
		within(t, "Settled", func() { ld.Settled() })
		within(t, "Capacities", func() { ld.Capacities(at) })
		within(t, "Counts", func() {
			ld.Counts("counters/c/1", 1, batch("c", t0, locsvc.Count{Name: "u: 2", N: 1}), t0)
		})
	}

	// Blocked on the read of the row it decides on.
	res := blockedRound(t, ld, g, "Get", at)
	reads(0)
	finish(t, g, res, "prepare u: 1 e2 b manual")

	// Blocked on the write of the move's next step (Promote).
	_, rev, _, _ := tb.Read(ctx, "u: 1")
	within(t, "SetMembers", func() { ld.SetMembers(map[string]int64{"m-a": rev}, at) })
	res = blockedRound(t, ld, g, "Txn", at.Add(time.Second))
	reads(1)
	finish(t, g, res, "migrating u: 1 e2 b ")
}

// TestPinDuringMoveWriteStaysDue: a pin set while the round writes the
// move it decided without that pin is not lost: the μ-shard stays due,
// and is decided again (to the pin) once the move settled.
func TestPinDuringMoveWriteStaysDue(t *testing.T) {
	ld, g, tb := newGatedLeader(t)
	ctx := context.Background()
	if _, err := ld.Recover(ctx, t0); err != nil {
		t.Fatal(err)
	}
	create(t, ld, "u: 1", "a", t0)
	ld.Manual("u: 1", "b")
	at := t0.Add(7 * time.Hour)
	res := blockedRound(t, ld, g, "Txn", at)
	within(t, "SetPin", func() { ld.SetPin("u: 1", "c") })
	finish(t, g, res, "prepare u: 1 e2 b manual")

	_, rev, _, _ := tb.Read(ctx, "u: 1")
	ld.SetMembers(map[string]int64{"m-a": rev}, at)
	round(t, ld, at.Add(time.Second), "migrating u: 1 e2 b ")
	_, rev, _, _ = tb.Read(ctx, "u: 1")
	ld.SetMembers(map[string]int64{"m-a": rev}, at)
	// Settled, then decided again in the same round: the pin wins.
	round(t, ld, at.Add(time.Second+grace), "stable u: 1 e2 b ", "prepare u: 1 e3 c pin")
}
