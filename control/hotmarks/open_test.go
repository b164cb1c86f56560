package hotmarks_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-cache/strata/control/hotmarks"
	"github.com/strata-cache/strata/control/store"
)

// closeCounter counts Close calls on a memory store client.
type closeCounter struct {
	*store.MemoryClient
	closes atomic.Int32
}

func (c *closeCounter) Close() error {
	c.closes.Add(1)
	return c.MemoryClient.Close()
}

// A Shared made by Open closes its store client once, after its
// goroutine, however often it is closed; an Open that fails has closed it.
func TestOpenOwnsTheStoreClient(t *testing.T) {
	st := &closeCounter{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	s, err := hotmarks.Open(st, hotmarks.Config{Hold: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	for range 2 {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if n := st.closes.Load(); n != 1 {
		t.Fatalf("store closed %d times", n)
	}

	bad := &closeCounter{MemoryClient: store.NewMemory(store.MemoryOptions{}).Connect()}
	if _, err := hotmarks.Open(bad, hotmarks.Config{Hold: -time.Second}); err == nil {
		t.Fatal("opened with a negative hold")
	}
	if n := bad.closes.Load(); n != 1 {
		t.Fatalf("store of a failed Open closed %d times", n)
	}
}
