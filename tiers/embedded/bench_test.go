package embedded

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

const benchKeys = 10_000

var benchValue = []byte(strings.Repeat("v", 100))

func benchStore(tb testing.TB) (*Store, [][]byte) {
	s := newStore(tb, Config{})
	keys := make([][]byte, benchKeys)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("user:%08d:profile", i))
		do(s, tiers.Request{Kind: tiers.KindSet, Key: keys[i], Value: benchValue})
	}
	return s, keys
}

// A warm Op reads a hit without allocating: the hard goal of the store.
func TestZeroAllocs(t *testing.T) {
	s, keys := benchStore(t)
	op := &tiers.Op{}
	op.Done = func(*tiers.Op) {}
	absent := []byte("absent")
	i := 0
	cases := []struct {
		name string
		req  func() tiers.Request
	}{
		{"get hit", func() tiers.Request {
			return tiers.Request{Kind: tiers.KindGet, Key: keys[i%benchKeys], WantValue: true, WantFlags: true, WantCAS: true}
		}},
		{"mg hit with every flag", func() tiers.Request {
			return tiers.Request{Kind: tiers.KindGet, Key: keys[i%benchKeys], WantValue: true, WantCAS: true,
				WantTTL: true, WantLastAccess: true, WantHit: true, WantSize: true, Recache: true, RecacheTTL: 30}
		}},
		{"get miss", func() tiers.Request {
			return tiers.Request{Kind: tiers.KindGet, Key: absent, WantValue: true}
		}},
		{"set over a same-sized value", func() tiers.Request {
			return tiers.Request{Kind: tiers.KindSet, Key: keys[i%benchKeys], Value: benchValue}
		}},
		{"touch", func() tiers.Request {
			return tiers.Request{Kind: tiers.KindGet, Key: keys[i%benchKeys], HasTTL: true, TTL: 3600}
		}},
	}
	for _, tc := range cases {
		op.Req = tc.req()
		s.Do(op) // warm the result buffer
		allocs := testing.AllocsPerRun(1000, func() {
			i++
			op.Req = tc.req()
			s.Do(op)
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per op", tc.name, allocs)
		}
	}
	do(s, tiers.Request{Kind: tiers.KindSet, Key: []byte("n"), Value: []byte("1000000")})
	op.Req = tiers.Request{Kind: tiers.KindArith, Key: []byte("n"), Mode: tiers.ModeDecr, Delta: 1}
	s.Do(op)
	if allocs := testing.AllocsPerRun(1000, func() { s.Do(op) }); allocs != 0 {
		t.Errorf("in-place decr: %v allocations per op", allocs)
	}
}

// BenchmarkGetHit reads 100-byte values. "wallclock" is the default
// Config.Now, which reads the clock on every operation; "coarse" injects a
// clock kept in an atomic, as a proxy with a once-a-second ticker would (and
// as memcached does).
func BenchmarkGetHit(b *testing.B) {
	for _, clock := range []string{"wallclock", "coarse"} {
		b.Run(clock, func(b *testing.B) {
			s, keys := benchStore(b)
			if clock == "coarse" {
				s.now = newClock(clockStart).Now
			}
			op := &tiers.Op{}
			op.Res.Value = make([]byte, 0, 256)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				op.Req = tiers.Request{Kind: tiers.KindGet, Key: keys[i%benchKeys], WantValue: true, WantFlags: true}
				s.Do(op)
			}
			if op.Res.Status != tiers.StatusHit {
				b.Fatal(op.Res.Status)
			}
		})
	}
}

func BenchmarkGetHitParallel(b *testing.B) {
	s, keys := benchStore(b)
	var seed atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		op := &tiers.Op{}
		op.Res.Value = make([]byte, 0, 256)
		i := int(seed.Add(7919))
		for pb.Next() {
			i++
			op.Req = tiers.Request{Kind: tiers.KindGet, Key: keys[i%benchKeys], WantValue: true, WantFlags: true}
			s.Do(op)
			if op.Res.Status != tiers.StatusHit {
				b.Error(op.Res.Status)
				return
			}
		}
	})
}

// BenchmarkSet overwrites existing keys with same-sized values, the common
// case of a cache refresh.
func BenchmarkSet(b *testing.B) {
	s, keys := benchStore(b)
	op := &tiers.Op{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		op.Req = tiers.Request{Kind: tiers.KindSet, Key: keys[i%benchKeys], Value: benchValue}
		s.Do(op)
	}
}

// BenchmarkSetEvicting writes fresh keys into a full store, so every set
// allocates its item and evicts the oldest.
func BenchmarkSetEvicting(b *testing.B) {
	s := newStore(b, Config{MaxBytes: 4 << 20})
	keys := make([][]byte, 1<<16)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("fresh:%08d", i))
	}
	op := &tiers.Op{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		op.Req = tiers.Request{Kind: tiers.KindSet, Key: keys[i%len(keys)], Value: benchValue}
		s.Do(op)
	}
}
