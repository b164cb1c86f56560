package compat

import (
	"crypto/md5"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// stdMD5 is the reference hashMD5 is held to.
func stdMD5(key []byte) uint32 {
	d := md5.Sum(key)
	return binary.LittleEndian.Uint32(d[:4])
}

// TestBlockMD5MatchesStandard holds blockMD5, which MD5Words falls back to
// where no assembly runs (and which this platform's tests would not reach
// through MD5Words), to crypto/md5 at every length a block holds, over a
// block reused from key to key.
func TestBlockMD5MatchesStandard(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	var b [64]byte
	for n := 0; n <= md5OneBlock; n++ {
		for range 20 {
			key := randKey(rng, n)
			padBlock(&b, key)
			if got, want := blockMD5(&b), stdMD5(key); got != want {
				t.Fatalf("blockMD5 of %d bytes %x = %08x, crypto/md5 %08x", n, key, got, want)
			}
		}
	}
}

// TestHashMD5MatchesStandard compares hashMD5 with crypto/md5 at every key
// length either side of the one-block limit, with random bytes (the
// padding byte 0x80 and zeros among them).
func TestHashMD5MatchesStandard(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n <= 130; n++ {
		for range 50 {
			key := randKey(rng, n)
			if got, want := hashMD5(key), stdMD5(key); got != want {
				t.Fatalf("%d-byte key %x: %#x, want %#x", n, key, got, want)
			}
		}
	}
}

// TestHashMD5Vectors: RFC 1321's test suite, by the first word.
func TestHashMD5Vectors(t *testing.T) {
	for in, hexDigest := range map[string]string{
		"":                           "d41d8cd98f00b204e9800998ecf8427e",
		"a":                          "0cc175b9c0f1b6a831c399e269772661",
		"abc":                        "900150983cd24fb0d6963f7d28e17f72",
		"message digest":             "f96b697d7cb7938d525a2f31aaf161d0",
		"abcdefghijklmnopqrstuvwxyz": "c3fcd3d76192e4007dfb496cca67e13b",
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789": "d174ab98d277d9f5a5611c2c9f419d9f",
	} {
		var first [4]byte
		for i := range first {
			hi, lo := unhex(hexDigest[2*i]), unhex(hexDigest[2*i+1])
			first[i] = hi<<4 | lo
		}
		if got, want := hashMD5([]byte(in)), binary.LittleEndian.Uint32(first[:]); got != want {
			t.Errorf("md5(%q): first word %#x, want %#x", in, got, want)
		}
	}
}

func unhex(c byte) byte {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// FuzzHashMD5 holds hashMD5 to crypto/md5 on any key.
func FuzzHashMD5(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("user:1234:profile"))
	f.Add(make([]byte, 55)) // the longest one-block key
	f.Add(make([]byte, 56)) // the shortest two-block key
	f.Fuzz(func(t *testing.T, key []byte) {
		if got, want := hashMD5(key), stdMD5(key); got != want {
			t.Fatalf("%x: %#x, want %#x", key, got, want)
		}
	})
}
