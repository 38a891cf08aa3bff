#include "textflag.h"

// func blockSum(b *[BlockSize]byte) uint64
//
// The sum of the block's 512 bytes: PSADBW against zero adds each
// 8-byte half of a 16-byte load into a 64-bit lane, four loads a step
// into two accumulators. See sum_amd64.go.
TEXT ·blockSum(SB), NOSPLIT, $0-16
	MOVQ b+0(FP), SI
	PXOR X0, X0
	PXOR X1, X1
	PXOR X2, X2
	MOVQ $8, CX

loop:
	MOVOU  0(SI), X3
	MOVOU  16(SI), X4
	MOVOU  32(SI), X5
	MOVOU  48(SI), X6
	PSADBW X0, X3
	PSADBW X0, X4
	PSADBW X0, X5
	PSADBW X0, X6
	PADDQ  X3, X1
	PADDQ  X4, X2
	PADDQ  X5, X1
	PADDQ  X6, X2
	ADDQ   $64, SI
	DECQ   CX
	JNZ    loop

	PADDQ  X2, X1
	MOVQ   X1, AX
	PSRLDQ $8, X1
	MOVQ   X1, BX
	ADDQ   BX, AX
	MOVQ   AX, ret+8(FP)
	RET
