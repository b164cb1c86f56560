package compat

import (
	"math/rand/v2"
	"testing"
)

// randKey is n random bytes, with the padding byte 0x80, 0 and 0xff
// frequent among them.
func randKey(rng *rand.Rand, n int) []byte {
	key := make([]byte, n)
	for i := range key {
		key[i] = byte(rng.Uint32())
		if rng.IntN(8) == 0 {
			key[i] = []byte{0, 0x80, 0xff}[rng.IntN(3)]
		}
	}
	return key
}

// md5Paths runs f once per way MD5Words can hash on this machine: the
// eight-lane routine (where the CPU has it), then the one-lane one.
func md5Paths(t *testing.T, f func(t *testing.T)) {
	t.Run("best", f)
	if haveMD5Word0x8 {
		t.Run("one-lane", func(t *testing.T) {
			haveMD5Word0x8 = false
			defer func() { haveMD5Word0x8 = true }()
			f(t)
		})
	}
}

// hashBatch hashes keys (at most Lanes, each at most 55 bytes) with
// padBlock and MD5Words, over blocks that held other keys before.
func hashBatch(keys [][]byte, blocks *[Lanes][64]byte) [Lanes]uint32 {
	for i, k := range keys {
		padBlock(&blocks[i], k)
	}
	var out [Lanes]uint32
	MD5Words(blocks, len(keys), &out)
	return out
}

// TestMD5WordsEveryLength holds MD5Words to crypto/md5 for every length
// from 0 to 55 in every lane, each batch mixing lengths, and for batches
// of every size from 1 to Lanes. The blocks are reused from batch to
// batch, so a byte a shorter key leaves behind would show.
func TestMD5WordsEveryLength(t *testing.T) {
	md5Paths(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(7, 8))
		var blocks [Lanes][64]byte
		for n := 0; n <= md5OneBlock; n++ {
			for size := 1; size <= Lanes; size++ {
				keys := make([][]byte, size)
				for lane := range keys {
					// Lane l of this batch has length n+l (mod 56), so
					// every lane sees every length over the loop on n.
					keys[lane] = randKey(rng, (n+lane*7)%(md5OneBlock+1))
				}
				out := hashBatch(keys, &blocks)
				for lane, k := range keys {
					if want := stdMD5(k); out[lane] != want {
						t.Fatalf("batch of %d, lane %d, %d-byte key %x: %#x, want %#x", size, lane, len(k), k, out[lane], want)
					}
				}
			}
		}
	})
}

// TestMD5BlockServer: MD5Block, MD5Words and ServerOfWord place each key
// where Server does, on the layouts that accept keys; the others, and keys
// they refuse, are reported as such.
func TestMD5BlockServer(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	weighted := four()
	weighted[1].Weight = 3
	for _, c := range []struct {
		name    string
		spec    Spec
		servers []Server
		takes   bool
	}{
		{"twemproxy-md5", Spec{Scheme: Twemproxy, Hash: "md5"}, four(), true},
		{"twemproxy-md5-tag", Spec{Scheme: Twemproxy, Hash: "md5", HashTag: "{}"}, weighted, true},
		{"libmemcached-md5", Spec{Scheme: LibmemcachedKetama, Hash: "md5"}, four(), true},
		{"libmemcached-weighted", Spec{Scheme: LibmemcachedKetama, Distribution: KetamaWeighted}, weighted, true},
		{"twemproxy-fnv", Spec{Scheme: Twemproxy}, four(), false},
		{"twemproxy-modula-md5", Spec{Scheme: Twemproxy, Distribution: Modula, Hash: "md5"}, four(), false},
		{"one-server", Spec{Scheme: Twemproxy, Hash: "md5"}, four()[:1], false},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := New(c.spec, c.servers)
			if err != nil {
				t.Fatal(err)
			}
			md5Paths(t, func(t *testing.T) {
				var blocks [Lanes][64]byte
				var keys [][]byte
				check := func() {
					var out [Lanes]uint32
					MD5Words(&blocks, len(keys), &out)
					for i, k := range keys {
						if got, want := l.ServerOfWord(out[i]), l.Server(k); got != want {
							t.Fatalf("key %q: server %d, want %d", k, got, want)
						}
					}
					keys = keys[:0]
				}
				for range 2000 {
					k := randKey(rng, rng.IntN(70))
					if rng.IntN(4) == 0 {
						k = append(append([]byte("pre{"), k...), "}post"...)
					}
					hashed := l.hashedPart(k)
					ok := l.MD5Block(k, &blocks[len(keys)])
					if want := c.takes && len(hashed) <= md5OneBlock && (len(hashed) > 0 || !l.emptyZero); ok != want {
						t.Fatalf("key %q: MD5Block %v, want %v", k, ok, want)
					}
					if ok {
						keys = append(keys, k)
						if len(keys) == Lanes || rng.IntN(5) == 0 {
							check()
						}
					}
				}
				check()
			})
		})
	}
}

// FuzzMD5Words holds a batch to crypto/md5: the input is cut into up to
// Lanes keys of at most 55 bytes at the given lengths.
func FuzzMD5Words(f *testing.F) {
	f.Add([]byte{0, 55, 56, 1}, make([]byte, 120))                        // empty, longest, a cut-short lane
	f.Add([]byte{3, 17, 31, 0, 8, 55, 2, 9}, []byte("user:1234:profile")) // a full batch, most lanes short of input
	f.Fuzz(func(t *testing.T, lens []byte, data []byte) {
		var keys [][]byte
		for _, n := range lens {
			if len(keys) == Lanes {
				break
			}
			k := data[:min(int(n)%(md5OneBlock+1), len(data))]
			data = data[len(k):]
			keys = append(keys, k)
		}
		if len(keys) == 0 {
			return
		}
		var blocks [Lanes][64]byte
		for i := range blocks {
			blocks[i][i] = 0xa5 // what an earlier batch left
		}
		out := hashBatch(keys, &blocks)
		for i, k := range keys {
			if want := stdMD5(k); out[i] != want {
				t.Fatalf("lane %d, key %x: %#x, want %#x", i, k, out[i], want)
			}
		}
	})
}
