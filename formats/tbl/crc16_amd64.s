#include "textflag.h"

// func crc16Fold(crc uint32, p []byte, k *crc16Consts, out *[16]byte)
//
// Folds p (a multiple of 64 bytes, at least 64) into 16 bytes with the
// same CRC-16/MODBUS as p, continuing from crc: four 16-byte lanes are
// each carried 512 bits forward per step with carry-less multiplies, then
// folded into one, 128 bits at a time. See crc16_amd64.go.
TEXT ·crc16Fold(SB), NOSPLIT, $0-48
	MOVL crc+0(FP), AX
	MOVQ p_base+8(FP), SI
	MOVQ p_len+16(FP), CX
	MOVQ k+32(FP), DX
	MOVQ out+40(FP), DI

	MOVOU 0(SI), X0
	MOVOU 16(SI), X1
	MOVOU 32(SI), X2
	MOVOU 48(SI), X3
	// The running CRC enters as the first bytes' XOR.
	MOVQ AX, X4
	PXOR X4, X0
	ADDQ $64, SI
	SUBQ $64, CX
	MOVOU 0(DX), X5  // by 512 bits: x^575, x^511 mod P
	MOVOU 16(DX), X6 // by 128 bits: x^191, x^127 mod P

loop:
	CMPQ CX, $64
	JB   combine

	MOVO      X0, X7
	PCLMULQDQ $0x00, X5, X0
	PCLMULQDQ $0x11, X5, X7
	MOVOU     0(SI), X8
	PXOR      X7, X0
	PXOR      X8, X0

	MOVO      X1, X9
	PCLMULQDQ $0x00, X5, X1
	PCLMULQDQ $0x11, X5, X9
	MOVOU     16(SI), X10
	PXOR      X9, X1
	PXOR      X10, X1

	MOVO      X2, X11
	PCLMULQDQ $0x00, X5, X2
	PCLMULQDQ $0x11, X5, X11
	MOVOU     32(SI), X12
	PXOR      X11, X2
	PXOR      X12, X2

	MOVO      X3, X13
	PCLMULQDQ $0x00, X5, X3
	PCLMULQDQ $0x11, X5, X13
	MOVOU     48(SI), X14
	PXOR      X13, X3
	PXOR      X14, X3

	ADDQ $64, SI
	SUBQ $64, CX
	JMP  loop

combine:
	MOVO      X0, X7
	PCLMULQDQ $0x00, X6, X0
	PCLMULQDQ $0x11, X6, X7
	PXOR      X0, X1
	PXOR      X7, X1

	MOVO      X1, X7
	PCLMULQDQ $0x00, X6, X1
	PCLMULQDQ $0x11, X6, X7
	PXOR      X1, X2
	PXOR      X7, X2

	MOVO      X2, X7
	PCLMULQDQ $0x00, X6, X2
	PCLMULQDQ $0x11, X6, X7
	PXOR      X2, X3
	PXOR      X7, X3

	MOVOU X3, 0(DI)
	RET
