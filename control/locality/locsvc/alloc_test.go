package locsvc

import (
	"testing"
)

// TestAccessAlloc: counting an access to a μ-shard already counted in this
// interval allocates nothing (the request path calls Access for every
// request of a μ-shard).
func TestAccessAlloc(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates; run without -race")
	}
	s, err := New(Config{Region: "eu", Member: "m"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	name := "u: 42"
	s.Access(name, false)
	if n := testing.AllocsPerRun(1000, func() { s.Access(name, true) }); n != 0 {
		t.Fatalf("%v allocations per access", n)
	}
}

// BenchmarkAccess: loops counting accesses to many μ-shards in parallel.
func BenchmarkAccess(b *testing.B) {
	s, err := New(Config{Region: "eu", Member: "m"}, nil)
	if err != nil {
		b.Fatal(err)
	}
	names := make([]string, 1024)
	for i := range names {
		names[i] = "u: " + string(rune('a'+i%26)) + string(rune('a'+i/26%26)) + string(rune('a'+i/676))
	}
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			s.Access(names[i&1023], i&7 == 0)
			i++
		}
	})
}
