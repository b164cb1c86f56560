//go:build amd64 && !purego

#include "textflag.h"

// md5Word0x8 is md5Word0 (md5_amd64.s) for eight blocks at once, one per
// 32-bit lane of the AVX2 registers: every lane runs the same 61 steps, so
// eight independent dependency chains share each instruction, and the
// time of a step is paid once for eight keys. Written from RFC 1321.
//
// The blocks are first transposed into the frame: k*32(SP) holds word k
// of every block, one per lane, for the steps that add it.
//
// Registers, after the transpose: Y0..Y3 hold a, b, c and d of all lanes,
// trading places from one step to the next as in md5Word0; Y4 is the
// round function's scratch, Y5 the rotate's and the step constant's; Y6 is
// all ones (for ^d in round 4).

// Each step: a = b + ((a + f(b, c, d) + x[k] + t) <<< s); what does not
// need b is added first, as in md5Word0. AVX2 has no rotate: a shift
// each way, or-ed.
#define STEP_START(a, k, i) \
	VPBROADCASTD md5T<>+(i*4)(SB), Y5; \
	VPADDD (k*32)(SP), a, a; \
	VPADDD Y5, a, a

#define STEP_END(a, b, s) \
	VPSLLD $s, a, Y5; \
	VPSRLD $(32-s), a, a; \
	VPOR Y5, a, a; \
	VPADDD b, a, a

// F = d ^ (b & (c ^ d))
#define STEP_F(a, b, c, d, k, i, s) \
	STEP_START(a, k, i); \
	VPXOR c, d, Y4; \
	VPAND b, Y4, Y4; \
	VPXOR d, Y4, Y4; \
	VPADDD Y4, a, a; \
	STEP_END(a, b, s)

// G = (b & d) | (c & ^d); the two terms share no bit, so they are added.
#define STEP_G(a, b, c, d, k, i, s) \
	STEP_START(a, k, i); \
	VPANDN c, d, Y4; \
	VPADDD Y4, a, a; \
	VPAND b, d, Y4; \
	VPADDD Y4, a, a; \
	STEP_END(a, b, s)

// H = b ^ c ^ d
#define STEP_H(a, b, c, d, k, i, s) \
	STEP_START(a, k, i); \
	VPXOR c, d, Y4; \
	VPXOR b, Y4, Y4; \
	VPADDD Y4, a, a; \
	STEP_END(a, b, s)

// I = c ^ (b | ^d)
#define STEP_I(a, b, c, d, k, i, s) \
	STEP_START(a, k, i); \
	VPXOR Y6, d, Y4; \
	VPOR b, Y4, Y4; \
	VPXOR c, Y4, Y4; \
	VPADDD Y4, a, a; \
	STEP_END(a, b, s)

// Words 8h..8h+7 of the eight blocks into the frame, transposed: lane i of
// word k at k*32(SP) is word k of blocks[i]. Rows in Y0..Y7, then an 8x8
// transpose of 32-bit words: pairs of rows interleaved by words (Y8..Y15),
// those by pairs of words (Y0..Y7), then the 128-bit halves exchanged.
#define TRANSPOSE(h) \
	VMOVDQU (0*64+h*32)(DI), Y0; \
	VMOVDQU (1*64+h*32)(DI), Y1; \
	VMOVDQU (2*64+h*32)(DI), Y2; \
	VMOVDQU (3*64+h*32)(DI), Y3; \
	VMOVDQU (4*64+h*32)(DI), Y4; \
	VMOVDQU (5*64+h*32)(DI), Y5; \
	VMOVDQU (6*64+h*32)(DI), Y6; \
	VMOVDQU (7*64+h*32)(DI), Y7; \
	VPUNPCKLDQ Y1, Y0, Y8; \
	VPUNPCKHDQ Y1, Y0, Y9; \
	VPUNPCKLDQ Y3, Y2, Y10; \
	VPUNPCKHDQ Y3, Y2, Y11; \
	VPUNPCKLDQ Y5, Y4, Y12; \
	VPUNPCKHDQ Y5, Y4, Y13; \
	VPUNPCKLDQ Y7, Y6, Y14; \
	VPUNPCKHDQ Y7, Y6, Y15; \
	VPUNPCKLQDQ Y10, Y8, Y0; \
	VPUNPCKHQDQ Y10, Y8, Y1; \
	VPUNPCKLQDQ Y11, Y9, Y2; \
	VPUNPCKHQDQ Y11, Y9, Y3; \
	VPUNPCKLQDQ Y14, Y12, Y4; \
	VPUNPCKHQDQ Y14, Y12, Y5; \
	VPUNPCKLQDQ Y15, Y13, Y6; \
	VPUNPCKHQDQ Y15, Y13, Y7; \
	VPERM2I128 $0x20, Y4, Y0, Y8; \
	VPERM2I128 $0x31, Y4, Y0, Y12; \
	VPERM2I128 $0x20, Y5, Y1, Y9; \
	VPERM2I128 $0x31, Y5, Y1, Y13; \
	VPERM2I128 $0x20, Y6, Y2, Y10; \
	VPERM2I128 $0x31, Y6, Y2, Y14; \
	VPERM2I128 $0x20, Y7, Y3, Y11; \
	VPERM2I128 $0x31, Y7, Y3, Y15; \
	VMOVDQU Y8, ((h*8+0)*32)(SP); \
	VMOVDQU Y9, ((h*8+1)*32)(SP); \
	VMOVDQU Y10, ((h*8+2)*32)(SP); \
	VMOVDQU Y11, ((h*8+3)*32)(SP); \
	VMOVDQU Y12, ((h*8+4)*32)(SP); \
	VMOVDQU Y13, ((h*8+5)*32)(SP); \
	VMOVDQU Y14, ((h*8+6)*32)(SP); \
	VMOVDQU Y15, ((h*8+7)*32)(SP)

// func md5Word0x8(blocks *[8][64]byte, out *[8]uint32)
TEXT ·md5Word0x8(SB), $512-16
	MOVQ blocks+0(FP), DI
	MOVQ out+8(FP), AX
	TRANSPOSE(0)
	TRANSPOSE(1)

	VPCMPEQD Y6, Y6, Y6
	VPBROADCASTD md5Init<>+0(SB), Y0
	VPBROADCASTD md5Init<>+4(SB), Y1
	VPBROADCASTD md5Init<>+8(SB), Y2
	VPBROADCASTD md5Init<>+12(SB), Y3

	// Round 1.
	STEP_F(Y0, Y1, Y2, Y3, 0, 0, 7)
	STEP_F(Y3, Y0, Y1, Y2, 1, 1, 12)
	STEP_F(Y2, Y3, Y0, Y1, 2, 2, 17)
	STEP_F(Y1, Y2, Y3, Y0, 3, 3, 22)
	STEP_F(Y0, Y1, Y2, Y3, 4, 4, 7)
	STEP_F(Y3, Y0, Y1, Y2, 5, 5, 12)
	STEP_F(Y2, Y3, Y0, Y1, 6, 6, 17)
	STEP_F(Y1, Y2, Y3, Y0, 7, 7, 22)
	STEP_F(Y0, Y1, Y2, Y3, 8, 8, 7)
	STEP_F(Y3, Y0, Y1, Y2, 9, 9, 12)
	STEP_F(Y2, Y3, Y0, Y1, 10, 10, 17)
	STEP_F(Y1, Y2, Y3, Y0, 11, 11, 22)
	STEP_F(Y0, Y1, Y2, Y3, 12, 12, 7)
	STEP_F(Y3, Y0, Y1, Y2, 13, 13, 12)
	STEP_F(Y2, Y3, Y0, Y1, 14, 14, 17)
	STEP_F(Y1, Y2, Y3, Y0, 15, 15, 22)

	// Round 2.
	STEP_G(Y0, Y1, Y2, Y3, 1, 16, 5)
	STEP_G(Y3, Y0, Y1, Y2, 6, 17, 9)
	STEP_G(Y2, Y3, Y0, Y1, 11, 18, 14)
	STEP_G(Y1, Y2, Y3, Y0, 0, 19, 20)
	STEP_G(Y0, Y1, Y2, Y3, 5, 20, 5)
	STEP_G(Y3, Y0, Y1, Y2, 10, 21, 9)
	STEP_G(Y2, Y3, Y0, Y1, 15, 22, 14)
	STEP_G(Y1, Y2, Y3, Y0, 4, 23, 20)
	STEP_G(Y0, Y1, Y2, Y3, 9, 24, 5)
	STEP_G(Y3, Y0, Y1, Y2, 14, 25, 9)
	STEP_G(Y2, Y3, Y0, Y1, 3, 26, 14)
	STEP_G(Y1, Y2, Y3, Y0, 8, 27, 20)
	STEP_G(Y0, Y1, Y2, Y3, 13, 28, 5)
	STEP_G(Y3, Y0, Y1, Y2, 2, 29, 9)
	STEP_G(Y2, Y3, Y0, Y1, 7, 30, 14)
	STEP_G(Y1, Y2, Y3, Y0, 12, 31, 20)

	// Round 3.
	STEP_H(Y0, Y1, Y2, Y3, 5, 32, 4)
	STEP_H(Y3, Y0, Y1, Y2, 8, 33, 11)
	STEP_H(Y2, Y3, Y0, Y1, 11, 34, 16)
	STEP_H(Y1, Y2, Y3, Y0, 14, 35, 23)
	STEP_H(Y0, Y1, Y2, Y3, 1, 36, 4)
	STEP_H(Y3, Y0, Y1, Y2, 4, 37, 11)
	STEP_H(Y2, Y3, Y0, Y1, 7, 38, 16)
	STEP_H(Y1, Y2, Y3, Y0, 10, 39, 23)
	STEP_H(Y0, Y1, Y2, Y3, 13, 40, 4)
	STEP_H(Y3, Y0, Y1, Y2, 0, 41, 11)
	STEP_H(Y2, Y3, Y0, Y1, 3, 42, 16)
	STEP_H(Y1, Y2, Y3, Y0, 6, 43, 23)
	STEP_H(Y0, Y1, Y2, Y3, 9, 44, 4)
	STEP_H(Y3, Y0, Y1, Y2, 12, 45, 11)
	STEP_H(Y2, Y3, Y0, Y1, 15, 46, 16)
	STEP_H(Y1, Y2, Y3, Y0, 2, 47, 23)

	// Round 4.
	STEP_I(Y0, Y1, Y2, Y3, 0, 48, 6)
	STEP_I(Y3, Y0, Y1, Y2, 7, 49, 10)
	STEP_I(Y2, Y3, Y0, Y1, 14, 50, 15)
	STEP_I(Y1, Y2, Y3, Y0, 5, 51, 21)
	STEP_I(Y0, Y1, Y2, Y3, 12, 52, 6)
	STEP_I(Y3, Y0, Y1, Y2, 3, 53, 10)
	STEP_I(Y2, Y3, Y0, Y1, 10, 54, 15)
	STEP_I(Y1, Y2, Y3, Y0, 1, 55, 21)
	STEP_I(Y0, Y1, Y2, Y3, 8, 56, 6)
	STEP_I(Y3, Y0, Y1, Y2, 15, 57, 10)
	STEP_I(Y2, Y3, Y0, Y1, 6, 58, 15)
	STEP_I(Y1, Y2, Y3, Y0, 13, 59, 21)
	STEP_I(Y0, Y1, Y2, Y3, 4, 60, 6)

	VPBROADCASTD md5Init<>+0(SB), Y5
	VPADDD Y5, Y0, Y0
	VMOVDQU Y0, (AX)
	VZEROUPPER
	RET

DATA md5T<>+0(SB)/4, $0xd76aa478
DATA md5T<>+4(SB)/4, $0xe8c7b756
DATA md5T<>+8(SB)/4, $0x242070db
DATA md5T<>+12(SB)/4, $0xc1bdceee
DATA md5T<>+16(SB)/4, $0xf57c0faf
DATA md5T<>+20(SB)/4, $0x4787c62a
DATA md5T<>+24(SB)/4, $0xa8304613
DATA md5T<>+28(SB)/4, $0xfd469501
DATA md5T<>+32(SB)/4, $0x698098d8
DATA md5T<>+36(SB)/4, $0x8b44f7af
DATA md5T<>+40(SB)/4, $0xffff5bb1
DATA md5T<>+44(SB)/4, $0x895cd7be
DATA md5T<>+48(SB)/4, $0x6b901122
DATA md5T<>+52(SB)/4, $0xfd987193
DATA md5T<>+56(SB)/4, $0xa679438e
DATA md5T<>+60(SB)/4, $0x49b40821
DATA md5T<>+64(SB)/4, $0xf61e2562
DATA md5T<>+68(SB)/4, $0xc040b340
DATA md5T<>+72(SB)/4, $0x265e5a51
DATA md5T<>+76(SB)/4, $0xe9b6c7aa
DATA md5T<>+80(SB)/4, $0xd62f105d
DATA md5T<>+84(SB)/4, $0x02441453
DATA md5T<>+88(SB)/4, $0xd8a1e681
DATA md5T<>+92(SB)/4, $0xe7d3fbc8
DATA md5T<>+96(SB)/4, $0x21e1cde6
DATA md5T<>+100(SB)/4, $0xc33707d6
DATA md5T<>+104(SB)/4, $0xf4d50d87
DATA md5T<>+108(SB)/4, $0x455a14ed
DATA md5T<>+112(SB)/4, $0xa9e3e905
DATA md5T<>+116(SB)/4, $0xfcefa3f8
DATA md5T<>+120(SB)/4, $0x676f02d9
DATA md5T<>+124(SB)/4, $0x8d2a4c8a
DATA md5T<>+128(SB)/4, $0xfffa3942
DATA md5T<>+132(SB)/4, $0x8771f681
DATA md5T<>+136(SB)/4, $0x6d9d6122
DATA md5T<>+140(SB)/4, $0xfde5380c
DATA md5T<>+144(SB)/4, $0xa4beea44
DATA md5T<>+148(SB)/4, $0x4bdecfa9
DATA md5T<>+152(SB)/4, $0xf6bb4b60
DATA md5T<>+156(SB)/4, $0xbebfbc70
DATA md5T<>+160(SB)/4, $0x289b7ec6
DATA md5T<>+164(SB)/4, $0xeaa127fa
DATA md5T<>+168(SB)/4, $0xd4ef3085
DATA md5T<>+172(SB)/4, $0x04881d05
DATA md5T<>+176(SB)/4, $0xd9d4d039
DATA md5T<>+180(SB)/4, $0xe6db99e5
DATA md5T<>+184(SB)/4, $0x1fa27cf8
DATA md5T<>+188(SB)/4, $0xc4ac5665
DATA md5T<>+192(SB)/4, $0xf4292244
DATA md5T<>+196(SB)/4, $0x432aff97
DATA md5T<>+200(SB)/4, $0xab9423a7
DATA md5T<>+204(SB)/4, $0xfc93a039
DATA md5T<>+208(SB)/4, $0x655b59c3
DATA md5T<>+212(SB)/4, $0x8f0ccc92
DATA md5T<>+216(SB)/4, $0xffeff47d
DATA md5T<>+220(SB)/4, $0x85845dd1
DATA md5T<>+224(SB)/4, $0x6fa87e4f
DATA md5T<>+228(SB)/4, $0xfe2ce6e0
DATA md5T<>+232(SB)/4, $0xa3014314
DATA md5T<>+236(SB)/4, $0x4e0811a1
DATA md5T<>+240(SB)/4, $0xf7537e82
DATA md5T<>+244(SB)/4, $0xbd3af235
DATA md5T<>+248(SB)/4, $0x2ad7d2bb
DATA md5T<>+252(SB)/4, $0xeb86d391
GLOBL md5T<>(SB), RODATA|NOPTR, $256

DATA md5Init<>+0(SB)/4, $0x67452301
DATA md5Init<>+4(SB)/4, $0xefcdab89
DATA md5Init<>+8(SB)/4, $0x98badcfe
DATA md5Init<>+12(SB)/4, $0x10325476
GLOBL md5Init<>(SB), RODATA|NOPTR, $16
