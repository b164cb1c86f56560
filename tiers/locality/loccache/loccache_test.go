package loccache

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/strata-cache/strata/tiers/locality/keyrule"
)

func id(rule int, f string) keyrule.ID { return keyrule.ID{Rule: rule, Field: []byte(f)} }

// h is a stand-in hash: tests choose it to place entries and to collide.
func h(f string) uint64 {
	var x uint64
	for _, b := range []byte(f) {
		x = x*131 + uint64(b)
	}
	return x
}

func newCache(t testing.TB, n int) *Cache {
	t.Helper()
	c, err := New(Config{Capacity: n})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGetPut(t *testing.T) {
	c := newCache(t, 4)
	if _, ok := c.Get(h("42"), id(0, "42")); ok {
		t.Fatal("hit in an empty cache")
	}
	if !c.Put(h("42"), id(0, "42"), Location{Owner: "eu", Epoch: 3}) {
		t.Fatal("first put refused")
	}
	if loc, ok := c.Get(h("42"), id(0, "42")); !ok || loc != (Location{Owner: "eu", Epoch: 3}) {
		t.Fatalf("got %+v %v", loc, ok)
	}
	if _, ok := c.Get(h("42"), id(1, "42")); ok {
		t.Fatal("another rule's μ-shard with the same field hit")
	}
	if c.Put(h("42"), id(0, "42"), Location{Owner: "us", Epoch: 2}) {
		t.Fatal("an older epoch replaced a newer one")
	}
	if !c.Put(h("42"), id(0, "42"), Location{Owner: "us", Epoch: 4}) {
		t.Fatal("a newer epoch was refused")
	}
	if loc, _ := c.Get(h("42"), id(0, "42")); loc != (Location{Owner: "us", Epoch: 4}) {
		t.Fatalf("after the newer put: %+v", loc)
	}
	if s := c.Stats(); s != (Stats{Hits: 2, Misses: 2}) || c.Len() != 1 {
		t.Fatalf("stats %+v, len %d", s, c.Len())
	}
}

// TestPutCopiesField: the id may borrow a request buffer that is reused.
func TestPutCopiesField(t *testing.T) {
	c := newCache(t, 2)
	buf := []byte("42")
	c.Put(h("42"), keyrule.ID{Field: buf}, Location{Owner: "eu", Epoch: 1})
	copy(buf, "99")
	if _, ok := c.Get(h("42"), id(0, "42")); !ok {
		t.Fatal("the cached field changed with the caller's buffer")
	}
}

func TestInvalidate(t *testing.T) {
	c := newCache(t, 4)
	c.Put(h("a"), id(0, "a"), Location{Owner: "eu", Epoch: 5})
	if c.Invalidate(h("a"), id(0, "a"), 4) {
		t.Fatal("a refusal of epoch 4 dropped the newer epoch 5")
	}
	if !c.Invalidate(h("a"), id(0, "a"), 5) {
		t.Fatal("a refusal of the cached epoch did not drop it")
	}
	if _, ok := c.Get(h("a"), id(0, "a")); ok || c.Len() != 0 {
		t.Fatal("still cached after invalidation")
	}
	if c.Invalidate(h("a"), id(0, "a"), 5) {
		t.Fatal("invalidated an absent entry")
	}
	if s := c.Stats(); s.Invalidations != 1 {
		t.Fatalf("stats %+v", s)
	}
	// After an invalidation any epoch may come back: the re-read decides.
	if !c.Put(h("a"), id(0, "a"), Location{Owner: "us", Epoch: 1}) {
		t.Fatal("put after invalidation refused")
	}
}

// TestClock follows the hand exactly: a referenced entry gets a second
// chance, an unreferenced one leaves.
func TestClock(t *testing.T) {
	c := newCache(t, 3)
	for _, f := range []string{"a", "b", "c"} {
		c.Put(h(f), id(0, f), Location{Owner: "eu", Epoch: 1})
	}
	c.Get(h("a"), id(0, "a"))
	c.Get(h("c"), id(0, "c"))
	c.Put(h("d"), id(0, "d"), Location{Owner: "eu", Epoch: 1}) // hand: a (clear its bit), b → victim
	want := map[string]bool{"a": true, "b": false, "c": true, "d": true}
	for f, in := range want {
		if _, ok := c.Get(h(f), id(0, f)); ok != in {
			t.Errorf("%s cached: %v, want %v", f, ok, in)
		}
	}
	// Now a, c, d are referenced; the hand is at c. The next victim: the
	// hand clears c, d, a, then takes c (first with a clear bit).
	c.Put(h("e"), id(0, "e"), Location{Owner: "eu", Epoch: 1})
	if _, ok := c.Get(h("c"), id(0, "c")); ok {
		t.Error("c survived a full turn of the hand")
	}
	if s := c.Stats(); s.Evictions != 2 || c.Len() != 3 {
		t.Fatalf("stats %+v, len %d", s, c.Len())
	}
}

func TestHashCollision(t *testing.T) {
	c := newCache(t, 4)
	c.Put(7, id(0, "a"), Location{Owner: "eu", Epoch: 1})
	if _, ok := c.Get(7, id(0, "b")); ok {
		t.Fatal("a colliding μ-shard hit another's entry")
	}
	c.Put(7, id(0, "b"), Location{Owner: "us", Epoch: 1})
	if loc, ok := c.Get(7, id(0, "b")); !ok || loc.Owner != "us" {
		t.Fatalf("the newcomer: %+v %v", loc, ok)
	}
	if _, ok := c.Get(7, id(0, "a")); ok {
		t.Fatal("both colliding entries cached: the index holds one per hash")
	}
	if c.Len() != 1 {
		t.Fatalf("len %d after a collision", c.Len())
	}
}

func TestReset(t *testing.T) {
	c := newCache(t, 2)
	c.Put(h("a"), id(0, "a"), Location{Owner: "eu", Epoch: 1})
	c.Reset()
	if _, ok := c.Get(h("a"), id(0, "a")); ok || c.Len() != 0 {
		t.Fatal("cached after Reset")
	}
	for _, f := range []string{"x", "y"} { // the full capacity is usable again
		c.Put(h(f), id(0, f), Location{Owner: "eu", Epoch: 1})
	}
	if c.Len() != 2 || c.Stats().Evictions != 0 {
		t.Fatalf("len %d, stats %+v", c.Len(), c.Stats())
	}
}

func TestConfig(t *testing.T) {
	for _, n := range []int{-1, MaxCapacity + 1} {
		if _, err := New(Config{Capacity: n}); err == nil {
			t.Errorf("capacity %d accepted", n)
		}
	}
	c, err := New(Config{})
	if err != nil || len(c.slots) != DefaultCapacity {
		t.Fatalf("default: %v", err)
	}
}

// TestAgainstModel runs random operations on a small cache and on a plain
// map without a bound, and checks that every hit returns what the map
// holds (a bounded cache may forget, never invent or go back in epoch),
// that the bound holds, and that the counters add up.
func TestAgainstModel(t *testing.T) {
	for seed := uint64(0); seed < 100; seed++ {
		rng := rand.New(rand.NewPCG(seed, 3))
		c := newCache(t, 1+rng.IntN(8))
		model := map[string]Location{}
		gets := 0
		for k := 0; k < 500; k++ {
			f := fmt.Sprint(rng.IntN(20))
			hh := h(f) % 16 // collisions on purpose
			switch rng.IntN(3) {
			case 0:
				gets++
				loc, ok := c.Get(hh, id(0, f))
				if ok && loc != model[f] {
					t.Fatalf("seed %d: %s: cached %+v, model %+v", seed, f, loc, model[f])
				}
			case 1:
				loc := Location{Owner: fmt.Sprint("r", rng.IntN(3)), Epoch: uint64(rng.IntN(10))}
				if c.Put(hh, id(0, f), loc) {
					model[f] = loc
				} else if loc.Epoch >= model[f].Epoch {
					t.Fatalf("seed %d: %s: put %+v refused over %+v", seed, f, loc, model[f])
				}
			case 2:
				e := uint64(rng.IntN(10))
				if c.Invalidate(hh, id(0, f), e) && model[f].Epoch > e {
					t.Fatalf("seed %d: %s: refusal of %d dropped %+v", seed, f, e, model[f])
				}
			}
			if c.Len() > len(c.slots) || len(c.index) != c.Len() {
				t.Fatalf("seed %d: len %d, index %d, capacity %d", seed, c.Len(), len(c.index), len(c.slots))
			}
		}
		if s := c.Stats(); int(s.Hits+s.Misses) != gets {
			t.Fatalf("seed %d: %d hits + %d misses for %d gets", seed, s.Hits, s.Misses, gets)
		}
	}
}

// TestStateOrder: within an epoch a migration only advances, so a late
// Prepare cannot hand serving back to the source once Migrating is cached.
func TestStateOrder(t *testing.T) {
	c := newCache(t, 4)
	prep := Location{Owner: "us", Epoch: 2, State: Prepare, Source: "eu"}
	mig := Location{Owner: "us", Epoch: 2, State: Migrating, Source: "eu"}
	stable := Location{Owner: "us", Epoch: 2, State: Stable}
	if !c.Put(h("a"), id(0, "a"), prep) || !c.Put(h("a"), id(0, "a"), mig) {
		t.Fatal("a later state of the epoch was refused")
	}
	if c.Put(h("a"), id(0, "a"), prep) {
		t.Fatal("Prepare replaced Migrating of the same epoch")
	}
	if !c.Put(h("a"), id(0, "a"), stable) || c.Put(h("a"), id(0, "a"), mig) {
		t.Fatal("Stable did not replace Migrating, or Migrating replaced Stable")
	}
	if !c.Put(h("a"), id(0, "a"), Location{Owner: "eu", Epoch: 3, State: Prepare, Source: "us"}) {
		t.Fatal("a newer epoch's Prepare was refused over a Stable")
	}
	if c.Put(h("a"), id(0, "a"), Location{Owner: "x", Epoch: 3, State: 9}) {
		t.Fatal("an unknown state replaced a known one")
	}
}

func TestServing(t *testing.T) {
	for _, c := range []struct {
		loc  Location
		want string
	}{
		{Location{Owner: "us", Epoch: 2, State: Prepare, Source: "eu"}, "eu"},
		{Location{Owner: "us", Epoch: 2, State: Migrating, Source: "eu"}, "us"},
		{Location{Owner: "us", Epoch: 2, State: Stable}, "us"},
		{Location{Owner: "us", Epoch: 2}, "us"},
	} {
		if got := c.loc.Serving(); got != c.want {
			t.Errorf("%+v serves from %q, want %q", c.loc, got, c.want)
		}
	}
	if Prepare.String() != "prepare" || State(7).String() != "State(7)" {
		t.Fatal("state names")
	}
}
