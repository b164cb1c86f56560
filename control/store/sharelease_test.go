package store_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
)

// grants counts the sessions granted by the store it wraps.
type grants struct {
	*store.MemoryClient
	n atomic.Int32
}

func (g *grants) NewSession(ctx context.Context, ttl int) (store.Session, error) {
	g.n.Add(1)
	return g.MemoryClient.NewSession(ctx, ttl)
}

// sharedRig is a Shared over a memory store on a manual clock, with
// owners loans of it.
type sharedRig struct {
	now    time.Time
	m      *store.Memory
	c      *grants
	sh     *store.Shared
	owners []store.Store
}

func newSharedRig(t *testing.T, owners int) *sharedRig {
	t.Helper()
	r := &sharedRig{now: time.Unix(1_700_000_000, 0)}
	r.m = store.NewMemory(store.MemoryOptions{Now: func() time.Time { return r.now }})
	r.c = &grants{MemoryClient: r.m.Connect()}
	r.sh = store.Share(r.c)
	for range owners {
		o, err := r.sh.Lend()
		if err != nil {
			t.Fatal(err)
		}
		r.owners = append(r.owners, o)
	}
	t.Cleanup(func() {
		for _, o := range r.owners {
			_ = o.Close()
		}
		_ = r.sh.Release()
	})
	return r
}

func (r *sharedRig) session(t *testing.T, owner, ttl int) store.Session {
	t.Helper()
	s, err := r.owners[owner].NewSession(context.Background(), ttl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (r *sharedRig) exists(t *testing.T, key string) bool {
	t.Helper()
	row, _, err := r.c.Get(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return row.Exists()
}

func ended(s store.Session) bool {
	select {
	case <-s.Done():
		return true
	default:
		return false
	}
}

// Owners' sessions of one TTL are one lease, granted once: a row an owner
// put on it outlives that owner's Close while another holds the lease,
// and goes when the last loan is closed. Another TTL is another lease.
func TestSharedSessionsAreOneLease(t *testing.T) {
	ctx := context.Background()
	r := newSharedRig(t, 3)
	a, b := r.session(t, 0, 5), r.session(t, 1, 5)
	if a.Lease() != b.Lease() || r.c.n.Load() != 1 {
		t.Fatalf("leases %x and %x from %d grants: want one lease, one grant", a.Lease(), b.Lease(), r.c.n.Load())
	}
	if other := r.session(t, 2, 7); other.Lease() == a.Lease() {
		t.Fatal("a session of another TTL shares the lease")
	}
	if _, err := r.owners[0].Txn(ctx, nil, []store.Op{store.PutLease("agents/a", nil, a.Lease())}); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	_ = a.Close() // idempotent: b's loan stays
	if !r.exists(t, "agents/a") || ended(b) {
		t.Fatal("one owner's Close revoked the lease another still holds")
	}
	_ = b.Close()
	if r.exists(t, "agents/a") || !ended(b) {
		t.Fatal("the last loan's Close did not revoke the lease")
	}
	if c := r.session(t, 0, 5); c.Lease() == a.Lease() {
		t.Fatal("a session after the revocation reuses the revoked lease")
	}
}

// When the lease expires every loan's Done closes together and the rows
// on it go; the owners' next sessions share one new lease, and closing
// the expired loans does not touch it.
func TestSharedSessionExpiresForAll(t *testing.T) {
	ctx := context.Background()
	r := newSharedRig(t, 2)
	a, b := r.session(t, 0, 5), r.session(t, 1, 5)
	if _, err := r.owners[1].Txn(ctx, nil, []store.Op{store.PutLease("acks/b", nil, b.Lease())}); err != nil {
		t.Fatal(err)
	}
	r.c.SetPartitioned(true) // keepalives stop getting through
	r.now = r.now.Add(5*time.Second - time.Nanosecond)
	r.m.ExpireLeases()
	if ended(a) || ended(b) {
		t.Fatal("the lease ended before its TTL")
	}
	r.now = r.now.Add(time.Nanosecond)
	r.m.ExpireLeases()
	if !ended(a) || !ended(b) {
		t.Fatalf("after the TTL: a ended %v, b ended %v; want both", ended(a), ended(b))
	}
	r.c.SetPartitioned(false)
	if r.exists(t, "acks/b") {
		t.Fatal("a row on the expired lease survived it")
	}
	a2, b2 := r.session(t, 0, 5), r.session(t, 1, 5)
	if a2.Lease() != b2.Lease() || a2.Lease() == a.Lease() || r.c.n.Load() != 2 {
		t.Fatalf("after expiry leases %x and %x (expired %x) from %d grants: want one new lease", a2.Lease(), b2.Lease(), a.Lease(), r.c.n.Load())
	}
	if _, err := r.owners[1].Txn(ctx, nil, []store.Op{store.PutLease("acks/b", nil, b2.Lease())}); err != nil {
		t.Fatal(err)
	}
	_ = a.Close()
	_ = b.Close()
	if ended(a2) || !r.exists(t, "acks/b") {
		t.Fatal("closing the expired loans ended the new lease")
	}
}

// Owners asking at once are granted one session between them.
func TestSharedSessionGrantedOnce(t *testing.T) {
	r := newSharedRig(t, 8)
	leases := make([]store.LeaseID, len(r.owners))
	var wg sync.WaitGroup
	for i := range r.owners {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := r.owners[i].NewSession(context.Background(), 5)
			if err != nil {
				t.Error(err)
				return
			}
			leases[i] = s.Lease()
		}()
	}
	wg.Wait()
	for _, l := range leases {
		if l != leases[0] {
			t.Fatalf("leases %x: want one", leases)
		}
	}
	if n := r.c.n.Load(); n != 1 {
		t.Fatalf("%d grants for one lease", n)
	}
}

// A loan's campaign runs on the shared session: it leads, and its
// leadership ends with the lease.
func TestSharedSessionCampaigns(t *testing.T) {
	ctx := context.Background()
	r := newSharedRig(t, 2)
	a := r.session(t, 0, 5)
	_ = r.session(t, 1, 5)
	lead, err := r.owners[0].Campaign(ctx, a, "shards-l2", "a")
	if err != nil {
		t.Fatal(err)
	}
	if l, ok, err := store.Leader(ctx, r.c, "shards-l2"); err != nil || !ok || l.Key != lead.Key() {
		t.Fatalf("leader %+v %v %v, want %s", l, ok, err, lead.Key())
	}
	r.c.SetPartitioned(true)
	r.now = r.now.Add(5 * time.Second)
	r.m.ExpireLeases()
	select {
	case <-lead.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the leadership outlived its lease")
	}
}
