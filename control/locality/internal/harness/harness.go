// Package harness gives the locality packages' tests both control stores
// behind storetest.Harness: the Memory store on a manual clock, and a real
// etcd (internal/etcdtest, which fails rather than skips under CI when the
// binary is missing) with a cuttable proxy per client. Tests run every
// scenario against both.
package harness

import (
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/etcdstore"
	"github.com/strata-cache/strata/control/store/etcdstore/etcdharness"
	"github.com/strata-cache/strata/control/store/storetest"
	"github.com/strata-cache/strata/internal/etcdtest"
	"github.com/strata-cache/strata/tiers/locality/loccache"
)

// Env is a store under test and what the scenario may do to it.
type Env struct {
	storetest.Harness
	// Memory is the memory store (nil for etcd): its clock moves with
	// Elapse.
	Memory *store.Memory
	// Etcd is the etcd server (nil for memory), to kill or freeze.
	Etcd *etcdtest.Server
	// Clock is the memory store's lease clock (nil for etcd, which runs
	// on real time); services under test may read it too.
	Clock *Clock
}

// Stores are the constructors of a fresh, empty store, by name.
func Stores() map[string]func(t *testing.T) Env {
	return map[string]func(t *testing.T) Env{"memory": Memory, "etcd": Etcd}
}

// Clock is a manual clock for the memory store and the services.
type Clock struct {
	mu sync.Mutex // guards now
	t  time.Time
}

// NewClock starts at t.
func NewClock(t time.Time) *Clock { return &Clock{t: t} }

// Now reads the clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Memory is a fresh memory store whose lease clock advances only with
// Elapse.
func Memory(t *testing.T) Env {
	clock := NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	m := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	return Env{Memory: m, Clock: clock, Harness: storetest.Harness{
		Connect: func(t *testing.T) store.Store {
			c := m.Connect()
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
		Partition: func(t *testing.T, c store.Store, cut bool) { c.(*store.MemoryClient).SetPartitioned(cut) },
		Compact:   func(t *testing.T, rev int64) { m.Compact(rev) },
		Elapse: func(t *testing.T, d time.Duration) {
			clock.Add(d)
			m.ExpireLeases()
		},
	}}
}

// Etcd is a fresh etcd; every client reaches it through a proxy of its
// own, so a test can cut one off.
func Etcd(t *testing.T) Env {
	srv := etcdtest.Start(t)
	return Env{Etcd: srv, Harness: etcdharness.New(t, srv, etcdstore.Config{KeepAlive: 500 * time.Millisecond})}
}

// Wait bounds every poll of these tests (poll.Until(t, harness.Wait, ...)):
// generous, the machine is shared.
const Wait = 30 * time.Second

// Resolve asks s for name's location (bypassing its cache when fresh)
// and waits for the answer, 30 s at most.
func Resolve(t testing.TB, s *locsvc.Service, name string, fresh bool) (loccache.Location, error) {
	t.Helper()
	type answer struct {
		loc loccache.Location
		err error
	}
	ch := make(chan answer, 2) // room for a wrong second answer: it must not block the service
	s.Resolve(name, fresh, func(l loccache.Location, err error) { ch <- answer{l, err} })
	select {
	case a := <-ch:
		return a.loc, a.err
	case <-time.After(30 * time.Second):
		t.Fatalf("Resolve(%s) never answered", name)
		return loccache.Location{}, nil
	}
}
