package plane_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/admin"
	"github.com/strata-cache/strata/control/locality/locsvc"
	"github.com/strata-cache/strata/control/locality/placesvc"
	"github.com/strata-cache/strata/control/locality/plane"
	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/placement"
	"github.com/strata-cache/strata/proxy"
	"github.com/strata-cache/strata/tiers"
	"github.com/strata-cache/strata/tiers/locality"
	"github.com/strata-cache/strata/tiers/locality/link"
)

func TestFillLease(t *testing.T) {
	for _, c := range []struct{ grace, maxTTL, want time.Duration }{
		{time.Hour, time.Hour, locality.DefaultFillLease},
		{5 * time.Second, time.Hour, 5 * time.Second},
		{time.Hour, 3500 * time.Millisecond, 3 * time.Second},
		{200 * time.Millisecond, time.Hour, time.Second},
	} {
		if got := plane.FillLease(c.grace, c.maxTTL); got != c.want {
			t.Errorf("FillLease(%v, %v) = %v, want %v", c.grace, c.maxTTL, got, c.want)
		}
	}
}

// countingStore counts Close calls on a memory store client.
type countingStore struct {
	*store.MemoryClient
	closes atomic.Int32
}

func (c *countingStore) Close() error {
	c.closes.Add(1)
	return c.MemoryClient.Close()
}

func placementConfig() placesvc.Config {
	return placesvc.Config{
		Regions: []string{"a", "b"}, Candidate: "a-1", Grace: 50 * time.Millisecond, Tick: 10 * time.Millisecond,
		Policy: placement.LocalityPolicy{MaxTTL: time.Hour, MinInterval: time.Hour},
	}
}

// Without an inner tier the Plane is the candidate and the view (strata
// control): no router, ready at once, and Stop closes the store once.
func TestControlOnly(t *testing.T) {
	st := &countingStore{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	p, err := plane.New(plane.Config{Campaign: true, Placement: placementConfig(),
		Pins: map[string]string{"u:": "b"}}, plane.Deps{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	if p.Router() != nil {
		t.Fatal("a router without an inner tier")
	}
	p.Start()
	if !p.AwaitReady(0) {
		t.Fatal("not ready without a location service")
	}
	var s admin.Snapshot
	p.Metrics(&s)
	if s.LocalityRequests != nil {
		t.Errorf("router counters without a router: %v", s.LocalityRequests)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if n := st.closes.Load(); n != 1 {
		t.Fatalf("store closed %d times", n)
	}
}

// A Plane that cannot be built has closed the store it was given.
func TestNewClosesTheStoreOnError(t *testing.T) {
	st := &countingStore{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	pc := placementConfig()
	pc.Regions = nil
	if _, err := plane.New(plane.Config{Campaign: true, Placement: pc}, plane.Deps{Store: st}); err == nil {
		t.Fatal("built without regions")
	}
	if n := st.closes.Load(); n != 1 {
		t.Fatalf("store closed %d times", n)
	}
}

// inner answers every op at once.
type inner struct{}

func (inner) Do(op *tiers.Op)              { op.Done(op) }
func (inner) Phase(r *tiers.Request) uint8 { return 0 }

// With an inner tier the Plane runs the router: the location service
// becomes ready on the memory store, and the router's counters reach the
// snapshot.
func TestDataPlane(t *testing.T) {
	loops, err := proxy.NewLoops(1)
	if err != nil {
		t.Fatal(err)
	}
	st := store.NewMemory(store.MemoryOptions{}).Connect()
	p, err := plane.New(plane.Config{
		Campaign: true, Placement: placementConfig(),
		Location: locsvc.Config{Region: "a", Member: "a-1"},
		Link:     link.Config{Peers: map[string]string{"b": "127.0.0.1:1"}},
		Router:   locality.Config{Region: "a", MaxTTL: time.Hour},
	}, plane.Deps{Store: st, Inner: inner{}, Loops: loops})
	if err != nil {
		t.Fatal(err)
	}
	if p.Router() == nil {
		t.Fatal("no router")
	}
	p.Start()
	if !p.AwaitReady(10 * time.Second) {
		t.Fatal("location service not ready on the memory store")
	}
	var s admin.Snapshot
	p.Metrics(&s)
	if len(s.LocalityRequests) != 4 {
		t.Errorf("router counters %v", s.LocalityRequests)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
}

// A data plane whose location service would age its unshipped counts
// with another half-life than the placement policy's is refused: the
// owner's count, shipped late, would weigh what the leader never meant
// (strata serve leaves Location.HalfLife unset, and gets the policy's).
func TestDataPlaneHalfLifeMismatch(t *testing.T) {
	loops, err := proxy.NewLoops(1)
	if err != nil {
		t.Fatal(err)
	}
	st := &countingStore{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	pc := placementConfig()
	pc.Policy.HalfLife = time.Second
	_, err = plane.New(plane.Config{
		Placement: pc,
		Location:  locsvc.Config{Region: "a", Member: "a-1", HalfLife: placement.DefaultHalfLife},
		Link:      link.Config{Peers: map[string]string{"b": "127.0.0.1:1"}},
		Router:    locality.Config{Region: "a", MaxTTL: time.Hour},
	}, plane.Deps{Store: st, Inner: inner{}, Loops: loops})
	if err == nil {
		t.Fatal("built with a location half-life of 1h against a policy's 1s")
	}
	if n := st.closes.Load(); n != 1 {
		t.Fatalf("store closed %d times", n)
	}
}
