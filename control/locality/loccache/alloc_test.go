package loccache

import "testing"

// TestGetAlloc: the request path's lookup allocates nothing, hit or miss,
// and neither does replacing a cached location.
func TestGetAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; make allocs runs this without it")
	}
	c := newCache(t, 4)
	hit, miss := id(0, "42"), id(0, "43")
	c.Put(h("42"), hit, Location{"eu", 1})
	if n := testing.AllocsPerRun(200, func() {
		if _, ok := c.Get(h("42"), hit); !ok {
			t.Fatal("miss")
		}
		if _, ok := c.Get(h("43"), miss); ok {
			t.Fatal("hit")
		}
		c.Put(h("42"), hit, Location{"eu", 1})
	}); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
}
