package embedded

import (
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// largeItems makes a store far larger than the CPU caches, so that every
// lookup pays its cache misses as it does in a production L2.
const largeItems = 2_000_000

// largeKey writes the key of item n into buf without allocating. Keys are
// formatted on the fly rather than read from a table so that the benchmark
// adds no cache misses of its own to the store's.
func largeKey(buf *[20]byte, n uint64) []byte {
	b := append(buf[:0], "item:"...)
	var d [10]byte
	for i := len(d) - 1; i >= 0; i-- {
		d[i] = byte('0' + n%10)
		n /= 10
	}
	return append(b, d[:]...)
}

// nextRand is xorshift64, enough to scatter reads over the store.
func nextRand(x uint64) uint64 {
	x ^= x << 13
	x ^= x >> 7
	x ^= x << 17
	return x
}

func largeStore(b *testing.B) *Store {
	s := newStore(b, Config{MaxBytes: 1 << 30})
	s.now = newClock(clockStart).Now
	var buf [20]byte
	op := &tiers.Op{}
	for n := range uint64(largeItems) {
		op.Req = tiers.Request{Kind: tiers.KindSet, Key: largeKey(&buf, n), Value: benchValue}
		s.Do(op)
		if op.Res.Status != tiers.StatusStored {
			b.Fatalf("set %d: %v", n, op.Res.Status)
		}
	}
	if s.Len() != largeItems {
		b.Fatalf("store holds %d items, want %d", s.Len(), largeItems)
	}
	return s
}

// BenchmarkGetHitLarge reads random keys of a 2-million-item store with
// 100-byte values: the multi-get workload whose lookups miss the caches.
// "miss" reads keys that were never stored, which should cost little more
// than the index probe.
func BenchmarkGetHitLarge(b *testing.B) {
	s := largeStore(b)
	for _, kind := range []string{"hit", "miss"} {
		b.Run(kind, func(b *testing.B) {
			var buf [20]byte
			op := &tiers.Op{}
			op.Res.Value = make([]byte, 0, 256)
			want, offset := tiers.StatusHit, uint64(0)
			if kind == "miss" {
				want, offset = tiers.StatusMiss, largeItems
			}
			x := uint64(0x9e3779b97f4a7c15)
			b.ReportAllocs()
			for b.Loop() {
				x = nextRand(x)
				op.Req = tiers.Request{Kind: tiers.KindGet, Key: largeKey(&buf, x%largeItems+offset), WantValue: true, WantFlags: true}
				s.Do(op)
				if op.Res.Status != want {
					b.Fatalf("%s: %v", op.Req.Key, op.Res.Status)
				}
			}
		})
	}
}
