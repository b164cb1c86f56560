//go:build amd64 && !purego

package compat

import "golang.org/x/sys/cpu"

// md5Word0 is the first word (little-endian) of the MD5 digest of a
// message of at most md5OneBlock bytes, given as its one padded block
// (md5_amd64.s).
//
//go:noescape
func md5Word0(b *[64]byte) uint32

// md5Word0x8 is md5Word0 of eight blocks at once (md5x8_amd64.s); it needs
// AVX2.
//
//go:noescape
func md5Word0x8(blocks *[Lanes][64]byte, out *[Lanes]uint32)

// haveMD5Word0 says md5Word0 exists on this platform.
const haveMD5Word0 = true

// haveMD5Word0x8 says this CPU runs md5Word0x8.
var haveMD5Word0x8 = cpu.X86.HasAVX2
