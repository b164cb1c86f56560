package store_test

import (
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
