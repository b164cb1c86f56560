//go:build amd64 && !purego

#include "textflag.h"

// md5Word0 runs MD5's compression once, from the initial state, over the
// 64-byte block at b (a message of at most 55 bytes with its padding and
// length already in place) and returns the first word of the digest. It
// follows RFC 1321's four rounds of sixteen steps. a, the only word
// returned, is last written by step 60, so the three steps after it, which
// write d, c and b, are left out.
//
// Registers: R8..R11 hold a, b, c and d, which trade places from one step
// to the next; R12 is the round function's scratch; SI points at the block.

// Each step: a = b + ((a + f(b, c, d) + x[k] + t) <<< s), with f per round:
// F = d ^ (b & (c ^ d)), G = (b & d) | (c & ^d), H = b ^ c ^ d,
// I = c ^ (b | ^d). b is the previous step's result and c, d older ones,
// so each step adds what does not need b first, and the part of f that
// does last: the chain from one step to the next is then three or four
// instructions before the rotate. G's two terms share no bit, so they
// are added rather than or-ed.
#define STEP_START(a, k, t) \
	ADDL $t, a; \
	ADDL (k*4)(SI), a

#define STEP_END(a, b, s) \
	ROLL $s, a; \
	ADDL b, a

#define STEP_F(a, b, c, d, k, t, s) \
	STEP_START(a, k, t); \
	MOVL c, R12; \
	XORL d, R12; \
	ANDL b, R12; \
	XORL d, R12; \
	ADDL R12, a; \
	STEP_END(a, b, s)

#define STEP_G(a, b, c, d, k, t, s) \
	STEP_START(a, k, t); \
	MOVL d, R12; \
	NOTL R12; \
	ANDL c, R12; \
	ADDL R12, a; \
	MOVL d, R12; \
	ANDL b, R12; \
	ADDL R12, a; \
	STEP_END(a, b, s)

#define STEP_H(a, b, c, d, k, t, s) \
	STEP_START(a, k, t); \
	MOVL c, R12; \
	XORL d, R12; \
	XORL b, R12; \
	ADDL R12, a; \
	STEP_END(a, b, s)

#define STEP_I(a, b, c, d, k, t, s) \
	STEP_START(a, k, t); \
	MOVL d, R12; \
	NOTL R12; \
	ORL b, R12; \
	XORL c, R12; \
	ADDL R12, a; \
	STEP_END(a, b, s)

// func md5Word0(b *[64]byte) uint32
TEXT ·md5Word0(SB), NOSPLIT, $0-12
	MOVQ b+0(FP), SI
	MOVL $0x67452301, R8
	MOVL $0xefcdab89, R9
	MOVL $0x98badcfe, R10
	MOVL $0x10325476, R11


	// Round 1.
	STEP_F(R8, R9, R10, R11, 0, 0xd76aa478, 7)
	STEP_F(R11, R8, R9, R10, 1, 0xe8c7b756, 12)
	STEP_F(R10, R11, R8, R9, 2, 0x242070db, 17)
	STEP_F(R9, R10, R11, R8, 3, 0xc1bdceee, 22)
	STEP_F(R8, R9, R10, R11, 4, 0xf57c0faf, 7)
	STEP_F(R11, R8, R9, R10, 5, 0x4787c62a, 12)
	STEP_F(R10, R11, R8, R9, 6, 0xa8304613, 17)
	STEP_F(R9, R10, R11, R8, 7, 0xfd469501, 22)
	STEP_F(R8, R9, R10, R11, 8, 0x698098d8, 7)
	STEP_F(R11, R8, R9, R10, 9, 0x8b44f7af, 12)
	STEP_F(R10, R11, R8, R9, 10, 0xffff5bb1, 17)
	STEP_F(R9, R10, R11, R8, 11, 0x895cd7be, 22)
	STEP_F(R8, R9, R10, R11, 12, 0x6b901122, 7)
	STEP_F(R11, R8, R9, R10, 13, 0xfd987193, 12)
	STEP_F(R10, R11, R8, R9, 14, 0xa679438e, 17)
	STEP_F(R9, R10, R11, R8, 15, 0x49b40821, 22)

	// Round 2.
	STEP_G(R8, R9, R10, R11, 1, 0xf61e2562, 5)
	STEP_G(R11, R8, R9, R10, 6, 0xc040b340, 9)
	STEP_G(R10, R11, R8, R9, 11, 0x265e5a51, 14)
	STEP_G(R9, R10, R11, R8, 0, 0xe9b6c7aa, 20)
	STEP_G(R8, R9, R10, R11, 5, 0xd62f105d, 5)
	STEP_G(R11, R8, R9, R10, 10, 0x02441453, 9)
	STEP_G(R10, R11, R8, R9, 15, 0xd8a1e681, 14)
	STEP_G(R9, R10, R11, R8, 4, 0xe7d3fbc8, 20)
	STEP_G(R8, R9, R10, R11, 9, 0x21e1cde6, 5)
	STEP_G(R11, R8, R9, R10, 14, 0xc33707d6, 9)
	STEP_G(R10, R11, R8, R9, 3, 0xf4d50d87, 14)
	STEP_G(R9, R10, R11, R8, 8, 0x455a14ed, 20)
	STEP_G(R8, R9, R10, R11, 13, 0xa9e3e905, 5)
	STEP_G(R11, R8, R9, R10, 2, 0xfcefa3f8, 9)
	STEP_G(R10, R11, R8, R9, 7, 0x676f02d9, 14)
	STEP_G(R9, R10, R11, R8, 12, 0x8d2a4c8a, 20)

	// Round 3.
	STEP_H(R8, R9, R10, R11, 5, 0xfffa3942, 4)
	STEP_H(R11, R8, R9, R10, 8, 0x8771f681, 11)
	STEP_H(R10, R11, R8, R9, 11, 0x6d9d6122, 16)
	STEP_H(R9, R10, R11, R8, 14, 0xfde5380c, 23)
	STEP_H(R8, R9, R10, R11, 1, 0xa4beea44, 4)
	STEP_H(R11, R8, R9, R10, 4, 0x4bdecfa9, 11)
	STEP_H(R10, R11, R8, R9, 7, 0xf6bb4b60, 16)
	STEP_H(R9, R10, R11, R8, 10, 0xbebfbc70, 23)
	STEP_H(R8, R9, R10, R11, 13, 0x289b7ec6, 4)
	STEP_H(R11, R8, R9, R10, 0, 0xeaa127fa, 11)
	STEP_H(R10, R11, R8, R9, 3, 0xd4ef3085, 16)
	STEP_H(R9, R10, R11, R8, 6, 0x04881d05, 23)
	STEP_H(R8, R9, R10, R11, 9, 0xd9d4d039, 4)
	STEP_H(R11, R8, R9, R10, 12, 0xe6db99e5, 11)
	STEP_H(R10, R11, R8, R9, 15, 0x1fa27cf8, 16)
	STEP_H(R9, R10, R11, R8, 2, 0xc4ac5665, 23)

	// Round 4.
	STEP_I(R8, R9, R10, R11, 0, 0xf4292244, 6)
	STEP_I(R11, R8, R9, R10, 7, 0x432aff97, 10)
	STEP_I(R10, R11, R8, R9, 14, 0xab9423a7, 15)
	STEP_I(R9, R10, R11, R8, 5, 0xfc93a039, 21)
	STEP_I(R8, R9, R10, R11, 12, 0x655b59c3, 6)
	STEP_I(R11, R8, R9, R10, 3, 0x8f0ccc92, 10)
	STEP_I(R10, R11, R8, R9, 10, 0xffeff47d, 15)
	STEP_I(R9, R10, R11, R8, 1, 0x85845dd1, 21)
	STEP_I(R8, R9, R10, R11, 8, 0x6fa87e4f, 6)
	STEP_I(R11, R8, R9, R10, 15, 0xfe2ce6e0, 10)
	STEP_I(R10, R11, R8, R9, 6, 0xa3014314, 15)
	STEP_I(R9, R10, R11, R8, 13, 0x4e0811a1, 21)
	STEP_I(R8, R9, R10, R11, 4, 0xf7537e82, 6)

	ADDL $0x67452301, R8
	MOVL R8, ret+8(FP)
	RET
