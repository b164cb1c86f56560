package embedded

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-cache/strata/tiers"
)

// BenchmarkSnapshot writes and loads a store of 100-byte values, the
// shape of the warm-restart goal (1 GiB, about 4.4 million items; this one
// holds a quarter of that so it fits a benchmark run), reporting the
// file's throughput. The file goes to $TMPDIR: point it at the disk the
// snapshot would live on, as Save syncs before it returns.
// snapBenchItems fill 256 MiB: each is charged 15+100+ItemOverhead bytes.
const snapBenchItems = 1_000_000

func BenchmarkSnapshot(b *testing.B) {
	path := filepath.Join(b.TempDir(), "snap")
	clock := newClock(clockStart)
	s := newStore(b, Config{MaxBytes: 256 << 20, Snapshot: path, Now: clock.Now})
	var buf [20]byte
	op := &tiers.Op{}
	for n := range uint64(snapBenchItems) {
		op.Req = tiers.Request{Kind: tiers.KindSet, Key: largeKey(&buf, n), Value: benchValue}
		s.Do(op)
	}
	if s.Len() != snapBenchItems {
		b.Fatalf("store holds %d items, want %d", s.Len(), snapBenchItems)
	}
	saved, err := s.Save()
	if err != nil {
		b.Fatal(err)
	}
	size := saved.Bytes
	b.Run("save", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Save(); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(size)
		b.ReportMetric(float64(s.Len()), "items")
	})
	b.Run("load", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			f, err := os.Open(path)
			if err != nil {
				b.Fatal(err)
			}
			r := newStore(b, Config{MaxBytes: 256 << 20, Now: clock.Now})
			got, err := r.load(f)
			_ = f.Close()
			if err != nil || got.Items != s.Len() {
				b.Fatalf("load = %+v, %v; want %d items", got, err, s.Len())
			}
		}
	})
}
