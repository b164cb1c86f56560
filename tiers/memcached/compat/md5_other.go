//go:build !amd64 || purego

package compat

// Elsewhere the standard library's MD5 serves every key (hashMD5).

const haveMD5Word0 = false

func md5Word0(*[64]byte) uint32 { panic("compat: md5Word0 without assembly") }
