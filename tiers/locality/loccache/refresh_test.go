package loccache

import "testing"

func TestRefreshOnlyTouchesCachedEntries(t *testing.T) {
	c := newCache(t, 4)
	a, b := id(0, "a"), id(0, "b")
	if c.Refresh(h("a"), a, Location{Owner: "eu", Epoch: 1}, false) || c.Len() != 0 {
		t.Fatal("Refresh filled the cache")
	}
	c.Put(h("a"), a, Location{Owner: "eu", Epoch: 2, State: Prepare, Source: "us"})
	if c.Refresh(h("a"), a, Location{Owner: "us", Epoch: 1}, false) {
		t.Fatal("an older epoch replaced a newer one")
	}
	if !c.Refresh(h("a"), a, Location{Owner: "eu", Epoch: 2, State: Migrating, Source: "us"}, false) {
		t.Fatal("Migrating did not replace Prepare of the same epoch")
	}
	if c.Refresh(h("a"), a, Location{Owner: "eu", Epoch: 2, State: Prepare, Source: "us"}, false) {
		t.Fatal("a late Prepare went back")
	}
	st := c.Stats()
	if loc, ok := c.Peek(h("a"), a); !ok || loc.State != Migrating {
		t.Fatalf("peek: %+v %v", loc, ok)
	}
	if _, ok := c.Peek(h("b"), b); ok {
		t.Fatal("peek found an absent entry")
	}
	if c.Stats() != st {
		t.Fatal("Peek counted")
	}
	if !c.Refresh(h("a"), a, Location{}, true) || c.Len() != 0 {
		t.Fatal("a deleted row stayed cached")
	}
}
