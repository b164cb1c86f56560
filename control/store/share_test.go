package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/strata-cache/strata/control/store"
)

// TestSharedClosesOnLastRelease: loans and the lender's hold release in
// any order, each at most once; the store closes with the last and not
// before, and nothing is lent after.
func TestSharedClosesOnLastRelease(t *testing.T) {
	ctx := context.Background()
	for _, order := range [][]int{{0, 1, 2}, {2, 1, 0}, {1, 0, 2}} {
		c := store.NewMemory(store.MemoryOptions{}).Connect()
		sh := store.Share(c)
		a, err := sh.Lend()
		if err != nil {
			t.Fatal(err)
		}
		b, err := sh.Lend()
		if err != nil {
			t.Fatal(err)
		}
		// An owner's session lives on the one client and is its own.
		sess, err := a.NewSession(ctx, 5)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.PutRow(ctx, b, "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		release := []func() error{sh.Release, a.Close, b.Close}
		for i, r := range order {
			if _, _, err := c.Get(ctx, "k"); err != nil {
				t.Fatalf("order %v: closed after %d of 3 releases: %v", order, i, err)
			}
			if err := release[r](); err != nil {
				t.Fatal(err)
			}
			if i < 2 {
				_ = release[r]() // a second release of the same hold does nothing
				if _, _, err := c.Get(ctx, "k"); err != nil {
					t.Fatalf("order %v: closed after %d of 3 releases (one repeated): %v", order, i+1, err)
				}
			}
		}
		if _, _, err := c.Get(ctx, "k"); !errors.Is(err, store.ErrClosed) {
			t.Fatalf("order %v: after every release Get says %v, want ErrClosed", order, err)
		}
		select {
		case <-sess.Done():
		default:
			t.Errorf("order %v: a session outlived its closed client", order)
		}
		if _, err := sh.Lend(); !errors.Is(err, store.ErrClosed) {
			t.Errorf("order %v: lent after close: %v", order, err)
		}
	}
}
