package store_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/store"
	"github.com/strata-cache/strata/control/store/storetest"
)

// manualClock is the memory store's lease clock in tests.
type manualClock struct {
	mu  sync.Mutex // guards now
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

func memoryHarness(t *testing.T) storetest.Harness {
	clock := &manualClock{now: time.Unix(1_700_000_000, 0)}
	m := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	return storetest.Harness{
		Connect: func(t *testing.T) store.Store {
			c := m.Connect()
			t.Cleanup(func() { _ = c.Close() })
			return c
		},
		Partition: func(t *testing.T, c store.Store, cut bool) {
			c.(*store.MemoryClient).SetPartitioned(cut)
		},
		Compact: func(t *testing.T, rev int64) { m.Compact(rev) },
		Elapse: func(t *testing.T, d time.Duration) {
			clock.add(d)
			m.ExpireLeases()
		},
	}
}

func TestMemoryStore(t *testing.T) { storetest.Run(t, memoryHarness) }

// A closed client's lease lives exactly its TTL on the injected clock,
// and a partition that heals in time keeps it.
func TestMemoryLeaseDeadline(t *testing.T) {
	ctx := context.Background()
	clock := &manualClock{now: time.Unix(1_700_000_000, 0)}
	m := store.NewMemory(store.MemoryOptions{Now: clock.Now})
	a, b := m.Connect(), m.Connect()
	sess, err := a.NewSession(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Txn(ctx, nil, []store.Op{store.PutLease("p/a", nil, sess.Lease())}); err != nil {
		t.Fatal(err)
	}
	exists := func() bool {
		row, _, err := b.Get(ctx, "p/a")
		if err != nil {
			t.Fatal(err)
		}
		return row.Exists()
	}
	a.SetPartitioned(true)
	clock.add(9 * time.Second)
	a.SetPartitioned(false) // healed within the TTL: kept alive again
	clock.add(time.Hour)
	if !exists() {
		t.Fatalf("a lease expired although its partition healed within the TTL")
	}
	_ = a.Close()
	clock.add(10*time.Second - time.Nanosecond)
	if !exists() {
		t.Fatalf("lease gone before its TTL")
	}
	clock.add(time.Nanosecond)
	if exists() {
		t.Fatalf("lease still there at its TTL")
	}
}

// Watches that fall further behind than the kept history get a Reset,
// as after an etcd compaction.
func TestMemoryHistoryBound(t *testing.T) {
	ctx := context.Background()
	m := store.NewMemory(store.MemoryOptions{History: 4})
	c := m.Connect()
	for i := 0; i < 10; i++ {
		if _, err := store.PutRow(ctx, c, "h/k", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := c.Watch("h/", 7).Next(ctx); err != nil || b.Reset || len(b.Changes) != 4 {
		t.Fatalf("watch from 7 of 10 with 4 kept: %+v, %v; want revisions 7..10", b, err)
	}
	if b, err := c.Watch("h/", 6).Next(ctx); err != nil || !b.Reset || b.Revision != 10 {
		t.Fatalf("watch from 6 of 10 with 4 kept: %+v, %v; want a reset at 10", b, err)
	}
}
