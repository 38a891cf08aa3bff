package tbl

import "golang.org/x/sys/cpu"

// Where the processor multiplies without carries (PCLMULQDQ), long runs
// are folded 64 bytes per step instead of looked up a byte at a time: the
// CRC-16 of every sample is the largest cost of reading or writing a v2
// file, and this runs several times faster than the tables.
//
// The folding works on bit-reflected polynomials over GF(2), as the CRC
// itself does: a 16-byte block loaded little-endian holds the message's
// first bit in bit 0, the highest power of x. With L and H its two halves,
// a block carried n bits forward is L·x^(n+64) + H·x^n, congruent modulo
// the CRC's polynomial P to the carry-less products of L and H with
// x^(n+63) mod P and x^(n-1) mod P (a carry-less product of two reflected
// values is one power of x short, hence the -1). Whatever is folded is
// congruent to the message modulo P, so the CRC of the final 16 bytes,
// from a zero state, is the CRC of the whole.

// crc16Consts are the folding constants, bit-reflected into 64 bits.
type crc16Consts [4]uint64

var (
	useCRC16Fold = cpu.X86.HasPCLMULQDQ && cpu.X86.HasSSE2
	crc16K       = crc16Consts{xPowModP(575), xPowModP(511), xPowModP(191), xPowModP(127)}
)

// xPowModP is x^n mod P (P = x^16 + x^15 + x^2 + 1, MODBUS's 0x8005),
// with the coefficient of x^d in bit 63-d.
func xPowModP(n int) uint64 {
	r := uint32(1)
	for range n {
		r <<= 1
		if r&0x10000 != 0 {
			r ^= 0x18005
		}
	}
	var k uint64
	for d := range 16 {
		if r>>d&1 != 0 {
			k |= 1 << (63 - d)
		}
	}
	return k
}

//go:noescape
func crc16Fold(crc uint32, p []byte, k *crc16Consts, out *[16]byte)

// crc16FoldMin is the least run worth folding.
const crc16FoldMin = 256

// crc16Fast continues crc over p by folding as much of p as it can, and
// returns what is left for the tables.
func crc16Fast(crc uint16, p []byte) (uint16, []byte) {
	if !useCRC16Fold || len(p) < crc16FoldMin {
		return crc, p
	}
	n := len(p) &^ 63
	var folded [16]byte
	crc16Fold(uint32(crc), p[:n], &crc16K, &folded)
	return crc16Table(0, folded[:]), p[n:]
}
