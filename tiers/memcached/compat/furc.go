package compat

import "encoding/binary"

// furc is mcrouter's "ch3" consistent hash (FurcHash): a binary decision
// tree walked with pseudorandom bits drawn from MurmurHash64A of the key
// and repeated rehashes of it. Written from the algorithm's description;
// checked against the values mcrouter's own tests pin (furc_test.go).

const (
	furcSeed     = 4193360111
	furcShift    = 23 // bit-index gap per try; bounds the pool at 2^23
	furcMaxTries = 32
	murmur64M    = 0xc6a4a7935bd1e995
	// furcWords bounds the bit cache: a grows by at most furcShift × d per
	// try, with d ≤ furcShift, so the highest bit index is below
	// furcShift + furcMaxTries·furcShift² = 16951, word 264.
	furcWords = 272
)

// MaxCh3Servers is the largest pool furc can address.
const MaxCh3Servers = 1 << furcShift

func murmur64A(key []byte, seed uint64) uint64 {
	const r = 47
	h := seed ^ uint64(len(key))*murmur64M
	for len(key) >= 8 {
		k := binary.LittleEndian.Uint64(key)
		k *= murmur64M
		k ^= k >> r
		k *= murmur64M
		h ^= k
		h *= murmur64M
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= murmur64M
	}
	h ^= h >> r
	h *= murmur64M
	h ^= h >> r
	return h
}

// murmurRehash is murmur64A of the 8 little-endian bytes of k.
func murmurRehash(k uint64) uint64 {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], k)
	return murmur64A(b[:], furcSeed)
}

// furcBits hands out the bit stream of one key, caching each 64-bit word.
type furcBits struct {
	key   []byte
	words [furcWords]uint64
	have  int // words[:have] are filled
}

func (f *furcBits) bit(idx uint32) uint32 {
	w := int(idx >> 6)
	for f.have <= w {
		if f.have == 0 {
			f.words[0] = murmur64A(f.key, furcSeed)
		} else {
			f.words[f.have] = murmurRehash(f.words[f.have-1])
		}
		f.have++
	}
	return uint32(f.words[w]>>(idx&63)) & 1
}

// furcHash returns the key's server in [0, m).
func furcHash(key []byte, m uint32) uint32 {
	if m <= 1 {
		return 0
	}
	f := furcBits{key: key}
	var d uint32
	for m > 1<<d {
		d++
	}
	a := d
	for range furcMaxTries {
		for f.bit(a) == 0 {
			d--
			if d == 0 {
				return 0
			}
			a = d
		}
		a += furcShift
		num := uint32(1)
		for i := uint32(0); i+1 < d; i++ {
			num = num<<1 | f.bit(a)
			a += furcShift
		}
		if num < m {
			return num
		}
	}
	return 0
}
