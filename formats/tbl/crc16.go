package tbl

import "encoding/binary"

// CRC-16/MODBUS: reflected polynomial 0x8005 (0xA001 reversed), initial
// value 0xFFFF, no final XOR. The CRC of no bytes is 0xFFFF.
const crc16Init = 0xFFFF

// crc16Tables are slicing-by-16 tables: tables[0] is the usual byte table,
// tables[k][b] the contribution of byte b followed by k zero bytes.
// Checksumming runs over every byte a v2 file holds, so it must keep up with
// the page cache: sixteen independent lookups per step run several times
// faster than a byte at a time, and 8 KiB of tables stay in the L1 cache.
var crc16Tables = func() (t [16][256]uint16) {
	for b := range 256 {
		c := uint16(b)
		for range 8 {
			if c&1 != 0 {
				c = c>>1 ^ 0xA001
			} else {
				c >>= 1
			}
		}
		t[0][b] = c
	}
	for k := 1; k < 16; k++ {
		for b := range 256 {
			c := t[k-1][b]
			t[k][b] = c>>8 ^ t[0][c&0xFF]
		}
	}
	return t
}()

// crc16Update continues a CRC-16/MODBUS over p.
func crc16Update(crc uint16, p []byte) uint16 {
	crc, p = crc16Fast(crc, p)
	return crc16Table(crc, p)
}

// crc16Table continues a CRC-16/MODBUS over p with the tables.
func crc16Table(crc uint16, p []byte) uint16 {
	t := &crc16Tables
	le := binary.LittleEndian
	for len(p) >= 16 {
		v := le.Uint64(p) ^ uint64(crc)
		w := le.Uint64(p[8:])
		crc = t[15][byte(v)] ^ t[14][byte(v>>8)] ^ t[13][byte(v>>16)] ^ t[12][byte(v>>24)] ^
			t[11][byte(v>>32)] ^ t[10][byte(v>>40)] ^ t[9][byte(v>>48)] ^ t[8][byte(v>>56)] ^
			t[7][byte(w)] ^ t[6][byte(w>>8)] ^ t[5][byte(w>>16)] ^ t[4][byte(w>>24)] ^
			t[3][byte(w>>32)] ^ t[2][byte(w>>40)] ^ t[1][byte(w>>48)] ^ t[0][byte(w>>56)]
		p = p[16:]
	}
	for _, b := range p {
		crc = crc>>8 ^ t[0][byte(crc)^b]
	}
	return crc
}

// CRC16 is the CRC-16/MODBUS of p, the checksum v2 entries hold.
func CRC16(p []byte) uint16 { return crc16Update(crc16Init, p) }
