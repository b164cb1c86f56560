package memcached

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-cache/strata/internal/memcachedtest"
	"github.com/strata-cache/strata/tiers"
)

// benchPool is a pool over one real memcached with keys k0..k{n-1} holding
// 100-byte values, and warm Ops to read them.
func benchPool(b testing.TB, depth int) (*harness, []*call) {
	mc := memcachedtest.Start(b)
	h := newHarness(b, Config{Servers: []Server{{Addr: mc.Addr}}}, 0)
	value := strings.Repeat("v", 100)
	calls := make([]*call, depth)
	for i := range calls {
		key := fmt.Sprint("k", i)
		h.one(set(key, value))
		calls[i] = newCall(get(key))
		calls[i].op.Res.Value = make([]byte, 0, 128)
	}
	return h, calls
}

// roundTrip issues the calls in one callback and drives the loop until
// every reply is in.
func roundTrip(h *harness, cs []*call) {
	for _, c := range cs {
		c.done = false
		h.pool.Do(&c.op)
	}
	h.pool.FlushLoop(0)
	for {
		all := true
		for _, c := range cs {
			all = all && c.done
		}
		if all {
			return
		}
		h.loops.step()
	}
}

// BenchmarkPoolGet is one get at a time through a real memcached: the
// round trip on loopback plus the pool's encode, parse and copy. Its
// allocs/op must be 0.
func BenchmarkPoolGet(b *testing.B) {
	h, cs := benchPool(b, 1)
	roundTrip(h, cs)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		roundTrip(h, cs)
	}
}

// BenchmarkPoolGetPipelined issues 32 gets per callback, as a loop serving
// many clients does; ns/op is per get.
func BenchmarkPoolGetPipelined(b *testing.B) {
	const depth = 32
	h, cs := benchPool(b, depth)
	roundTrip(h, cs)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i += depth {
		roundTrip(h, cs)
	}
}

// TestPoolGetAllocs: once warm, a get through the pool and a real memcached
// allocates nothing — encoding, queueing, parsing and copying the value
// all reuse their buffers.
func TestPoolGetAllocs(t *testing.T) {
	h, cs := benchPool(t, 8)
	for range 10 {
		roundTrip(h, cs)
	}
	n := testing.AllocsPerRun(200, func() { roundTrip(h, cs) })
	if n != 0 {
		t.Errorf("a warm batch of 8 gets allocates %.1f times", n)
	}
	for _, c := range cs {
		if c.op.Res.Status != tiers.StatusHit || len(c.op.Res.Value) != 100 {
			t.Fatalf("bench get: %+v", c.op.Res)
		}
	}
}
