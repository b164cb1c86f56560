package sampler

import (
	"encoding/binary"
	"math/bits"
)

// XXH64 primes, from the xxHash specification.
const (
	prime1 uint64 = 11400714785074694791
	prime2 uint64 = 14029467366897019727
	prime3 uint64 = 1609587929392839161
	prime4 uint64 = 9650029242287828579
	prime5 uint64 = 2870177450012600261
)

// KeyHash is the sampling hash: XXH64 of key with the given seed, so any
// xxHash library reproduces it. A key is sampled at rate R iff
// KeyHash(seed, key) % R == 0.
//
// It is a one-shot implementation of the specification: the streaming
// xxhash.Digest that supports a seed costs several times more for short
// keys, and this runs for every request. Tests check it against that Digest.
func KeyHash(seed uint64, key []byte) uint64 {
	n := len(key)
	var h uint64
	if n >= 32 {
		v1 := seed + prime1 + prime2
		v2 := seed + prime2
		v3 := seed
		v4 := seed - prime1
		for len(key) >= 32 {
			v1 = round(v1, binary.LittleEndian.Uint64(key[0:8]))
			v2 = round(v2, binary.LittleEndian.Uint64(key[8:16]))
			v3 = round(v3, binary.LittleEndian.Uint64(key[16:24]))
			v4 = round(v4, binary.LittleEndian.Uint64(key[24:32]))
			key = key[32:]
		}
		h = bits.RotateLeft64(v1, 1) + bits.RotateLeft64(v2, 7) + bits.RotateLeft64(v3, 12) + bits.RotateLeft64(v4, 18)
		h = merge(h, v1)
		h = merge(h, v2)
		h = merge(h, v3)
		h = merge(h, v4)
	} else {
		h = seed + prime5
	}
	h += uint64(n)
	for ; len(key) >= 8; key = key[8:] {
		h ^= round(0, binary.LittleEndian.Uint64(key[:8]))
		h = bits.RotateLeft64(h, 27)*prime1 + prime4
	}
	if len(key) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(key[:4])) * prime1
		h = bits.RotateLeft64(h, 23)*prime2 + prime3
		key = key[4:]
	}
	for _, c := range key {
		h ^= uint64(c) * prime5
		h = bits.RotateLeft64(h, 11) * prime1
	}
	h ^= h >> 33
	h *= prime2
	h ^= h >> 29
	h *= prime3
	h ^= h >> 32
	return h
}

func round(acc, input uint64) uint64 {
	acc += input * prime2
	acc = bits.RotateLeft64(acc, 31)
	return acc * prime1
}

func merge(h, v uint64) uint64 {
	h ^= round(0, v)
	return h*prime1 + prime4
}
