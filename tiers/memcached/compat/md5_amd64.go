//go:build amd64 && !purego

package compat

// md5Word0 is the first word (little-endian) of the MD5 digest of a
// message of at most md5OneBlock bytes, given as its one padded block
// (md5_amd64.s).
//
//go:noescape
func md5Word0(b *[64]byte) uint32

// haveMD5Word0 says md5Word0 exists on this platform.
const haveMD5Word0 = true
