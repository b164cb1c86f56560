package main

import (
	"errors"
	"testing"
	"time"

	"github.com/bradfitz/gomemcache/memcache"

	"github.com/strata-cache/strata/internal/poll"
)

// TestLocalityForwardedReadToFencedOwnerMisses: c is cut off etcd for
// longer than fence_after while it owns a μ-shard. A read another region
// forwards to it answers a miss, as a read through c does — never an
// error and never a value — and a forwarded write still fails. a waits
// longer for its link than c waits for its own lookups, so a sees c's
// answer rather than its own timeout.
func TestLocalityForwardedReadToFencedOwnerMisses(t *testing.T) {
	if testing.Short() {
		t.Skip("runs etcd, three memcached and three strata processes")
	}
	f := startFleet(t, fleetOptions{
		migrateAfter:   "1h", // nothing moves the μ-shard to a while it reads
		viaProxy:       map[string]bool{"c": true},
		forwardTimeout: map[string]string{"a": "5s", "c": "2s"},
		fenceAfter:     "3s",
	})
	a, c := f.region("a"), f.region("c")
	a.client.Timeout = 20 * time.Second
	const m, key = "u: 9", "u:{9}:k"
	c.mustSet(t, key, "x1") // created at c, owned by c
	f.settledAt(t, m, "c", 20*time.Second)
	a.mustGet(t, key, "x1") // forwarded to c: a caches the owner
	c.etcd.Cut()
	defer c.etcd.Heal()
	poll.Until(t, 20*time.Second, "a read forwarded to the fenced c to miss", func() bool {
		it, err := a.client.Get(key)
		switch {
		case errors.Is(err, memcache.ErrCacheMiss):
			return true
		case err != nil:
			t.Fatalf("a read forwarded to c cut off etcd: %v, want a miss", err)
		case string(it.Value) != "x1":
			t.Fatalf("a read forwarded to c cut off etcd: %q", it.Value)
		}
		return false
	})
	for i := 0; i < 5; i++ {
		if it, err := a.client.Get(key); !errors.Is(err, memcache.ErrCacheMiss) {
			t.Fatalf("read %d forwarded to the fenced c: %v %v, want a miss", i, it, err)
		}
	}
	if err := a.client.Set(&memcache.Item{Key: key, Value: []byte("x-fenced")}); err == nil {
		t.Fatal("a write forwarded to the fenced c was acknowledged")
	}
	if it, err := c.client.Get(key); !errors.Is(err, memcache.ErrCacheMiss) {
		t.Fatalf("a read through the fenced c: %v %v, want a miss", it, err)
	}
	if got := f.requests(t, c, "owner_unreachable"); got < 8 {
		t.Errorf("owner_unreachable at c: %v, want at least 8 (6 forwarded reads, a write, its own read)", got)
	}
}
