package compat

import (
	"strconv"
	"testing"

	"github.com/strata-cache/strata/tiers/shardmap"
)

// The lookup cost of each layout next to the shard map's (hash the key to
// a shard, then read its owner), over four servers and 1,000 typical keys.

func benchKeys() [][]byte {
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = []byte("user:" + strconv.Itoa(i*7919) + ":profile")
	}
	return keys
}

func benchLayout(b *testing.B, spec Spec) {
	l, err := New(spec, four())
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys()
	b.ReportAllocs()
	b.ResetTimer()
	sink := 0
	for i := 0; b.Loop(); i++ {
		sink += l.Server(keys[i%len(keys)])
	}
	_ = sink
}

func BenchmarkLookup(b *testing.B) {
	for _, c := range []struct {
		name string
		spec Spec
	}{
		{"twemproxy-ketama-fnv1a_64", Spec{Scheme: Twemproxy}},
		{"twemproxy-ketama-md5", Spec{Scheme: Twemproxy, Hash: "md5"}},
		{"twemproxy-modula-crc32a", Spec{Scheme: Twemproxy, Distribution: Modula, Hash: "crc32a"}},
		{"libmemcached-ketama", Spec{Scheme: LibmemcachedKetama}},
		{"libmemcached-ketama_weighted", Spec{Scheme: LibmemcachedKetama, Distribution: KetamaWeighted}},
		{"pymemcache", Spec{Scheme: Pymemcache}},
		{"python-memcached", Spec{Scheme: PythonMemcached}},
		{"gomemcache", Spec{Scheme: Gomemcache}},
		{"mcrouter-ch3", Spec{Scheme: McrouterCh3}},
		{"mcrouter-crc32", Spec{Scheme: McrouterCRC32}},
	} {
		b.Run(c.name, func(b *testing.B) { benchLayout(b, c.spec) })
	}
	b.Run("shardmap", func(b *testing.B) {
		servers := make([]shardmap.Server, 4)
		for i := range servers {
			servers[i] = shardmap.Server{Addr: "127.0.0.1:" + strconv.Itoa(20000+i), Weight: 1}
		}
		const seed = 0x7374_7261_7461_2d72
		m, err := shardmap.Rendezvous(seed, 4096, servers)
		if err != nil {
			b.Fatal(err)
		}
		keys := benchKeys()
		b.ReportAllocs()
		sink := 0
		for i := 0; b.Loop(); i++ {
			sink += m.Owner(shardmap.Shard(seed, keys[i%len(keys)], m.Shards()))
		}
		_ = sink
	})
}

// TestLookupAllocatesNothing holds every layout to the promise in doc.go.
func TestLookupAllocatesNothing(t *testing.T) {
	keys := benchKeys()
	for _, spec := range []Spec{{Scheme: Twemproxy}, {Scheme: Twemproxy, Hash: "md5", HashTag: "{}"},
		{Scheme: LibmemcachedKetama}, {Scheme: Pymemcache}, {Scheme: PythonMemcached},
		{Scheme: Gomemcache}, {Scheme: McrouterCh3}, {Scheme: McrouterCRC32}} {
		l, err := New(spec, four())
		if err != nil {
			t.Fatal(err)
		}
		if n := testing.AllocsPerRun(100, func() {
			for _, k := range keys[:50] {
				l.Server(k)
			}
		}); n != 0 {
			t.Errorf("%s: %v allocations per 50 lookups", spec.Scheme, n)
		}
	}
}

// BenchmarkMD5Batch: the cost per key of a full batch of typical keys
// (MD5Block, MD5Words, ServerOfWord) on an MD5 ketama continuum, next to
// Server one key at a time (single) and the hash alone (words).
func BenchmarkMD5Batch(b *testing.B) {
	l, err := New(Spec{Scheme: Twemproxy, Hash: "md5"}, four())
	if err != nil {
		b.Fatal(err)
	}
	keys := benchKeys()
	b.Run("single", func(b *testing.B) {
		sink := 0
		for i := 0; b.Loop(); i++ {
			sink += l.Server(keys[i%len(keys)])
		}
		_ = sink
	})
	var blocks [Lanes][64]byte
	var out [Lanes]uint32
	b.Run("batch", func(b *testing.B) {
		sink := 0
		for i := 0; b.Loop(); i += Lanes {
			for j := range Lanes {
				l.MD5Block(keys[(i+j)%len(keys)], &blocks[j])
			}
			MD5Words(&blocks, Lanes, &out)
			for _, w := range out {
				sink += l.ServerOfWord(w)
			}
		}
		_ = sink
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*Lanes), "ns/key")
	})
	b.Run("words", func(b *testing.B) {
		for b.Loop() {
			MD5Words(&blocks, Lanes, &out)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*Lanes), "ns/key")
	})
}
