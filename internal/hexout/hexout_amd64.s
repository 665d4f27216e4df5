//go:build amd64 && !purego

#include "textflag.h"

// Sixteen nibble masks, nines, '0's and the distance from '0'+10 to 'a'.
DATA hexNibble<>+0(SB)/8, $0x0f0f0f0f0f0f0f0f
DATA hexNibble<>+8(SB)/8, $0x0f0f0f0f0f0f0f0f
GLOBL hexNibble<>(SB), RODATA|NOPTR, $16
DATA hexNine<>+0(SB)/8, $0x0909090909090909
DATA hexNine<>+8(SB)/8, $0x0909090909090909
GLOBL hexNine<>(SB), RODATA|NOPTR, $16
DATA hexZero<>+0(SB)/8, $0x3030303030303030
DATA hexZero<>+8(SB)/8, $0x3030303030303030
GLOBL hexZero<>(SB), RODATA|NOPTR, $16
DATA hexAlpha<>+0(SB)/8, $0x2727272727272727
DATA hexAlpha<>+8(SB)/8, $0x2727272727272727
GLOBL hexAlpha<>(SB), RODATA|NOPTR, $16

// func encodeSSE2(dst, src *byte, n int)
TEXT ·encodeSSE2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVOU hexNibble<>(SB), X4
	MOVOU hexNine<>(SB), X5
	MOVOU hexZero<>(SB), X6
	MOVOU hexAlpha<>(SB), X7

loop:
	MOVOU (SI), X0 // sixteen bytes
	MOVO X0, X1
	PSRLW $4, X1
	PAND X4, X1    // their high nibbles
	PAND X4, X0    // their low nibbles

	// A nibble's digit: '0' + nibble, and 39 more from 10 on ('a').
	MOVO X1, X2
	PCMPGTB X5, X2
	PAND X7, X2
	PADDB X6, X1
	PADDB X2, X1
	MOVO X0, X3
	PCMPGTB X5, X3
	PAND X7, X3
	PADDB X6, X0
	PADDB X3, X0

	// Interleave: the high nibble's digit first.
	MOVO X1, X2
	PUNPCKLBW X0, X2
	PUNPCKHBW X0, X1
	MOVOU X2, 0(DI)
	MOVOU X1, 16(DI)

	ADDQ $16, SI
	ADDQ $32, DI
	SUBQ $16, CX
	JNZ loop
	RET

// The sixteen digits, in each 128-bit lane: VPSHUFB's table.
DATA hexDigits<>+0(SB)/8, $0x3736353433323130
DATA hexDigits<>+8(SB)/8, $0x6665646362613938
DATA hexDigits<>+16(SB)/8, $0x3736353433323130
DATA hexDigits<>+24(SB)/8, $0x6665646362613938
GLOBL hexDigits<>(SB), RODATA|NOPTR, $32

// func encodeAVX2(dst, src *byte, n int)
//
// Thirty-two bytes at a time: the nibbles looked up in hexDigits with
// VPSHUFB. The input's quadwords are first put in the order 0, 2, 1, 3,
// so that the in-lane byte interleaves give digits 0-15 and 16-31 in
// order. A last block of sixteen (n an odd multiple of 16) is written by
// the SSE2 loop.
TEXT ·encodeAVX2(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	VMOVDQU hexDigits<>(SB), Y7
	VPBROADCASTB hexNibble<>(SB), Y6
	CMPQ CX, $32
	JB   tail

loop32:
	VMOVDQU (SI), Y0
	VPERMQ $0xD8, Y0, Y0
	VPSRLW $4, Y0, Y1
	VPAND Y6, Y1, Y1       // high nibbles
	VPAND Y6, Y0, Y0       // low nibbles
	VPSHUFB Y1, Y7, Y1     // their digits
	VPSHUFB Y0, Y7, Y0
	VPUNPCKLBW Y0, Y1, Y2  // bytes 0-15: high digit first
	VPUNPCKHBW Y0, Y1, Y3  // bytes 16-31
	VMOVDQU Y2, 0(DI)
	VMOVDQU Y3, 32(DI)
	ADDQ $32, SI
	ADDQ $64, DI
	SUBQ $32, CX
	CMPQ CX, $32
	JAE  loop32

tail:
	VZEROUPPER
	TESTQ CX, CX
	JZ   done
	MOVQ DI, dst+0(FP)
	MOVQ SI, src+8(FP)
	MOVQ CX, n+16(FP)
	JMP  ·encodeSSE2(SB)

done:
	RET
