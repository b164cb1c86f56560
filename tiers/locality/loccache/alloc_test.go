package loccache

import (
	"fmt"
	"testing"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

func keyruleID(f []byte) keyrule.ID { return keyrule.ID{Field: f} }

// TestGetAlloc: the request path's lookup allocates nothing, hit or miss,
// and neither does replacing a cached location.
func TestGetAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; make allocs runs this without it")
	}
	c := newCache(t, 4)
	hit, miss := id(0, "42"), id(0, "43")
	c.Put(h("42"), hit, Location{Owner: "eu", Epoch: 1})
	if n := testing.AllocsPerRun(200, func() {
		if _, ok := c.Get(h("42"), hit); !ok {
			t.Fatal("miss")
		}
		if _, ok := c.Get(h("43"), miss); ok {
			t.Fatal("hit")
		}
		c.Put(h("42"), hit, Location{Owner: "eu", Epoch: 1})
	}); n != 0 {
		t.Fatalf("%v allocations per lookup", n)
	}
}

// BenchmarkGet: a hit in a full cache of 64 Ki entries.
func BenchmarkGet(b *testing.B) {
	c := newCache(b, 1<<16)
	ids := make([]string, 1<<16)
	for i := range ids {
		ids[i] = fmt.Sprint(i)
		c.Put(h(ids[i]), id(0, ids[i]), Location{Owner: "eu", Epoch: 1})
	}
	keys := make([][]byte, len(ids))
	for i := range keys {
		keys[i] = []byte(ids[i])
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i&(1<<16-1)]
		if _, ok := c.Get(h(ids[i&(1<<16-1)]), keyruleID(k)); !ok {
			b.Fatal("miss")
		}
		i++
	}
}
