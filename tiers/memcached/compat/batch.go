package compat

import (
	"crypto/md5"
	"encoding/binary"
)

// A lookup on an MD5 ketama continuum is mostly MD5's compression: 61
// steps, each waiting on the one before, so one key at a time runs at the
// latency of the chain, not at the CPU's throughput. A caller that holds
// several keys (a pipelined batch of gets) hashes them together instead:
//
//  1. MD5Block writes each key's padded block into one of Lanes slots;
//  2. MD5Words hashes the slots in one pass (on amd64 with AVX2, eight
//     lanes in the same instructions);
//  3. ServerOfWord turns each key's word into its server.
//
// The result is Server's, bit for bit.

// Lanes is how many blocks MD5Words hashes in one pass.
const Lanes = 8

// MD5Block prepares key for MD5Words when l is a ketama continuum over MD5
// and the part of key its hash reads fits in one block: it writes that
// part, padded, into b (whatever b held before) and reports true. It
// reports false, and leaves b alone, for every other layout and key (a
// single server, a key over 55 bytes, an empty key twemproxy hashes to 0):
// Server serves those.
func (l *Layout) MD5Block(key []byte, b *[64]byte) bool {
	if !l.md5 || l.kind != kindContinuum || l.n == 1 {
		return false
	}
	key = l.hashedPart(key)
	if len(key) > md5OneBlock || (l.emptyZero && len(key) == 0) {
		return false
	}
	padBlock(b, key)
	return true
}

// MD5Words sets out[i] to the first word of the MD5 digest of blocks[i],
// for each i below n (n <= Lanes); the blocks were written by MD5Block.
// The other lanes of out are left undefined.
func MD5Words(blocks *[Lanes][64]byte, n int, out *[Lanes]uint32) {
	switch {
	case n >= 2 && haveMD5Word0x8:
		md5Word0x8(blocks, out)
	case haveMD5Word0:
		for i := range n {
			out[i] = md5Word0(&blocks[i])
		}
	default:
		for i := range n {
			out[i] = blockMD5(&blocks[i])
		}
	}
}

// blockMD5 is MD5's first word of the message padded into b, by the
// standard library.
func blockMD5(b *[64]byte) uint32 {
	n := binary.LittleEndian.Uint64(b[56:]) >> 3
	d := md5.Sum(b[:n])
	return binary.LittleEndian.Uint32(d[:4])
}

// ServerOfWord is the index of the server holding a key whose block
// MD5Words hashed to w; MD5Block accepted the key.
func (l *Layout) ServerOfWord(w uint32) int {
	return l.serverAt(w)
}
