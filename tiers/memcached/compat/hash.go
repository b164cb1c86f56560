package compat

import (
	"crypto/md5"
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// The hash functions of twemproxy's hashkit (libmemcached's libhashkit is
// the same family). Each is written from the published algorithm, with the
// incumbents' quirks kept because placement depends on them bit for bit:
//
//   - several of them read the key through a signed char, so a byte of
//     0x80 and above is sign-extended before it is mixed in (sx);
//   - "crc16" keeps the bits its 32-bit register shifts past 16;
//   - "crc32" is libmemcached's 15-bit variant, "crc32a" the standard one;
//   - "fnv1a_64" runs in 32 bits with the 64-bit constants truncated;
//   - "murmur" is MurmurHash2 seeded with 0xdeadbeef × length;
//   - "jenkins" is lookup3's hashlittle with initval 13.
//
// None of them allocates.

// sx returns b as C's (uint32_t)(char)b on a signed-char platform.
func sx(b byte) uint32 { return uint32(int32(int8(b))) }

// HashFunc hashes a key to 32 bits.
type HashFunc func(key []byte) uint32

// hashes maps the names twemproxy's YAML uses onto the functions.
var hashes = map[string]HashFunc{
	"one_at_a_time": hashOneAtATime,
	"md5":           hashMD5,
	"crc16":         hashCRC16,
	"crc32":         hashCRC32,
	"crc32a":        crc32.ChecksumIEEE,
	"fnv1_64":       hashFNV1_64,
	"fnv1a_64":      hashFNV1a64,
	"fnv1_32":       hashFNV1_32,
	"fnv1a_32":      hashFNV1a32,
	"hsieh":         hashHsieh,
	"murmur":        hashMurmur2,
	"jenkins":       hashJenkins,
}

// HashNames lists the hash names in a stable order, for error messages and
// documentation.
var HashNames = []string{"md5", "crc16", "crc32", "crc32a", "fnv1_64", "fnv1a_64",
	"fnv1_32", "fnv1a_32", "hsieh", "murmur", "jenkins", "one_at_a_time"}

func hashOneAtATime(key []byte) uint32 {
	var v uint32
	for _, c := range key {
		v += sx(c)
		v += v << 10
		v ^= v >> 6
	}
	v += v << 3
	v ^= v >> 11
	v += v << 15
	return v
}

// md5OneBlock is the longest message MD5 pads into a single block.
const md5OneBlock = 55

// hashMD5 is the first four bytes of the key's MD5, little-endian. A key
// of up to 55 bytes (nearly every key) is padded here and compressed once
// by md5Word0, which leaves out what md5.Sum adds around its one block
// (copying the key, then the padding, into its digest, and writing out all
// sixteen bytes) and the last three steps, which only write the words a
// lookup does not read. Longer keys, and platforms without md5Word0, take
// md5.Sum.
func hashMD5(key []byte) uint32 {
	if !haveMD5Word0 || len(key) > md5OneBlock {
		d := md5.Sum(key)
		return binary.LittleEndian.Uint32(d[:4])
	}
	var b [64]byte
	padBlock(&b, key)
	return md5Word0(&b)
}

// padBlock writes key (at most md5OneBlock bytes) into b as MD5's one
// padded block: the key, the byte 0x80, zeros, and the key's length in
// bits. Every byte of b is written, so b may hold an earlier block.
func padBlock(b *[64]byte, key []byte) {
	n := copy(b[:], key)
	b[n] = 0x80
	clear(b[n+1 : 56])
	binary.LittleEndian.PutUint64(b[56:], uint64(n)<<3)
}

// crc16Table is CRC-16/XMODEM's (polynomial 0x1021).
var crc16Table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// hashCRC16 is twemproxy's: the XMODEM table, but run in a 32-bit
// register that is never cut back to 16 bits, so bits shifted out of the
// CRC stay in the result.
func hashCRC16(key []byte) uint32 {
	var c uint32
	for _, b := range key {
		c = c<<8 ^ uint32(crc16Table[byte(c>>8)^b])
	}
	return c
}

// hashCRC32 keeps bits 16..30 of the standard CRC-32, as libmemcached did.
func hashCRC32(key []byte) uint32 { return crc32.ChecksumIEEE(key) >> 16 & 0x7fff }

const (
	fnv64Init  = 0xcbf29ce484222325
	fnv64Prime = 0x100000001b3
	fnv32Init  = 2166136261
	fnv32Prime = 16777619
)

func hashFNV1_64(key []byte) uint32 {
	h := uint64(fnv64Init)
	for _, c := range key {
		h *= fnv64Prime
		h ^= uint64(int64(int8(c)))
	}
	return uint32(h)
}

func hashFNV1a64(key []byte) uint32 {
	h := uint32(fnv64Init & 0xffffffff)
	for _, c := range key {
		h ^= sx(c)
		h *= uint32(fnv64Prime & 0xffffffff)
	}
	return h
}

func hashFNV1_32(key []byte) uint32 {
	h := uint32(fnv32Init)
	for _, c := range key {
		h *= fnv32Prime
		h ^= sx(c)
	}
	return h
}

func hashFNV1a32(key []byte) uint32 {
	h := uint32(fnv32Init)
	for _, c := range key {
		h ^= sx(c)
		h *= fnv32Prime
	}
	return h
}

// hashHsieh is Paul Hsieh's SuperFastHash as twemproxy builds it on x86-64:
// 16-bit reads little-endian, the third byte of a 3-byte tail sign-extended.
func hashHsieh(key []byte) uint32 {
	if len(key) == 0 {
		return 0
	}
	le16 := func(b []byte) uint32 { return uint32(b[0]) | uint32(b[1])<<8 }
	var h uint32
	rem := len(key) & 3
	for len(key) >= 4 {
		h += le16(key)
		tmp := le16(key[2:])<<11 ^ h
		h = h<<16 ^ tmp
		key = key[4:]
		h += h >> 11
	}
	switch rem {
	case 3:
		h += le16(key)
		h ^= h << 16
		h ^= sx(key[2]) << 18
		h += h >> 11
	case 2:
		h += le16(key)
		h ^= h << 11
		h += h >> 17
	case 1:
		h += uint32(key[0])
		h ^= h << 10
		h += h >> 1
	}
	h ^= h << 3
	h += h >> 5
	h ^= h << 4
	h += h >> 17
	h ^= h << 25
	h += h >> 6
	return h
}

// hashMurmur2 is MurmurHash2 (32-bit) with the seed 0xdeadbeef × length.
func hashMurmur2(key []byte) uint32 {
	const m, r = 0x5bd1e995, 24
	n := uint32(len(key))
	h := (0xdeadbeef * n) ^ n
	for len(key) >= 4 {
		k := binary.LittleEndian.Uint32(key)
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
		key = key[4:]
	}
	switch len(key) {
	case 3:
		h ^= uint32(key[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(key[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(key[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return h
}

// hashJenkins is Bob Jenkins' lookup3 hashlittle, initval 13.
func hashJenkins(key []byte) uint32 {
	rot := bits.RotateLeft32
	a := 0xdeadbeef + uint32(len(key)) + 13
	b, c := a, a
	le := func(p []byte) uint32 { // up to 4 bytes, little-endian
		var v uint32
		for i, x := range p {
			v |= uint32(x) << (8 * i)
		}
		return v
	}
	for len(key) > 12 {
		a += binary.LittleEndian.Uint32(key)
		b += binary.LittleEndian.Uint32(key[4:])
		c += binary.LittleEndian.Uint32(key[8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
		key = key[12:]
	}
	if len(key) == 0 {
		return c
	}
	a += le(key[:min(4, len(key))])
	if len(key) > 4 {
		b += le(key[4:min(8, len(key))])
	}
	if len(key) > 8 {
		c += le(key[8:])
	}
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return c
}

// murmur3x86_32 is MurmurHash3's x86 32-bit variant over the concatenation
// a‖b, without building it.
func murmur3x86_32(seed uint32, a, b []byte) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	h := seed
	n := len(a) + len(b)
	at := func(i int) uint32 {
		if i < len(a) {
			return uint32(a[i])
		}
		return uint32(b[i-len(a)])
	}
	mix := func(k uint32) uint32 {
		k *= c1
		k = bits.RotateLeft32(k, 15)
		return k * c2
	}
	i := 0
	for ; i+4 <= n; i += 4 {
		var k uint32
		if i+4 <= len(a) {
			k = binary.LittleEndian.Uint32(a[i:])
		} else if i >= len(a) {
			k = binary.LittleEndian.Uint32(b[i-len(a):])
		} else {
			k = at(i) | at(i+1)<<8 | at(i+2)<<16 | at(i+3)<<24
		}
		h ^= mix(k)
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	var k uint32
	switch n - i {
	case 3:
		k ^= at(i+2) << 16
		fallthrough
	case 2:
		k ^= at(i+1) << 8
		fallthrough
	case 1:
		k ^= at(i)
		h ^= mix(k)
	}
	h ^= uint32(n)
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func md5Sum(s string) [16]byte { return md5.Sum([]byte(s)) }
