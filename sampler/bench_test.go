package sampler

import (
	"fmt"
	"testing"
)

// notSampled returns a key that rate 1,000,000 does not sample.
func notSampled(s *Sampler) []byte {
	for i := 0; ; i++ {
		k := []byte(fmt.Sprintf("photos:foobar:%d:c1", i))
		if !s.Sampled(k) {
			return k
		}
	}
}

// The cost every request pays: one hash and one modulo.
func BenchmarkSampledMiss(b *testing.B) {
	s := newSampler(b, Config{Rate: DefaultRate})
	key := notSampled(s)
	b.ReportAllocs()
	for b.Loop() {
		if s.Sampled(key) {
			b.Fatal("sampled")
		}
	}
}

// The producer's cost of recording one access of a sampled key: claim a
// slot, copy the record and key, publish. The benchmark empties the ring
// itself (cheaply) so every Record finds room; no drops are measured.
func BenchmarkRecord(b *testing.B) {
	s := newSampler(b, Config{Rate: 1})
	rec := Record{Op: OpGet, Key: []byte("photos:foobar:12345:c1"), ValueSize: 100, Level: 2}
	half := s.ring.Cap() / 2
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Record(&rec)
		if i++; i == half {
			s.ring.Drain(0, func(*slot) {})
			i = 0
		}
	}
	if s.Stats().Dropped != 0 {
		b.Fatal("dropped")
	}
}

// Producers on every core against the real drainer. With rate 1 they
// outrun it, which is what the ring is for: the share dropped is reported.
func BenchmarkRecordParallel(b *testing.B) {
	s := newSampler(b, Config{Rate: 1})
	s.Start()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		rec := Record{Op: OpGet, Key: []byte("photos:foobar:12345:c1"), ValueSize: 100, Level: 2}
		for pb.Next() {
			s.Record(&rec)
		}
	})
	b.StopTimer()
	st := s.Stats()
	b.ReportMetric(float64(st.Dropped)/float64(st.Recorded+st.Dropped), "dropped/op")
}

// What a request pays on average at a given rate: Sampled for every key,
// Record for the sampled ones, with the drainer writing a gzip log.
func benchmarkRequests(b *testing.B, rate uint64) {
	s := newSampler(b, Config{Rate: rate, Dir: b.TempDir(), Gzip: true})
	s.Start()
	keys := make([][]byte, 1<<14)
	for i := range keys {
		keys[i] = []byte(fmt.Sprintf("photos:foobar:%d:c%d", i*7919, i%4))
	}
	rec := Record{Op: OpGet, ValueSize: 100, Level: 2}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i&(len(keys)-1)]
		i++
		if s.Sampled(k) {
			rec.Key = k
			s.Record(&rec)
		}
	}
}

func BenchmarkRequestsRate100(b *testing.B)     { benchmarkRequests(b, 100) }
func BenchmarkRequestsRate1000000(b *testing.B) { benchmarkRequests(b, DefaultRate) }
