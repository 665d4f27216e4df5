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
