//go:build !amd64 || purego

package compat

// Elsewhere the standard library's MD5 serves every key (hashMD5).

const haveMD5Word0 = false

var haveMD5Word0x8 = false

func md5Word0(*[64]byte) uint32 { panic("compat: md5Word0 without assembly") }

func md5Word0x8(*[Lanes][64]byte, *[Lanes]uint32) { panic("compat: md5Word0x8 without assembly") }
