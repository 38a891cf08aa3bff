package tarfile

import (
	"bytes"
	"encoding/binary"
	"strconv"
)

// BlockSize is the size of a tar header block and the unit of payload padding.
const BlockSize = 512

// Field positions inside a 512-byte header block. The v7 fields are shared
// by every format; the rest depend on the magic.
const (
	offName        = 0   // [100]
	offMode        = 100 // [8]
	offUID         = 108 // [8]
	offGID         = 116 // [8]
	offSize        = 124 // [12]
	offMtime       = 136 // [12]
	offChksum      = 148 // [8]
	offTypeflag    = 156 // [1]
	offLinkname    = 157 // [100]
	offMagic       = 257 // [6]
	offVersion     = 263 // [2]
	offUname       = 265 // [32]
	offGname       = 297 // [32]
	offPrefix      = 345 // [155] ustar; [131] star
	offGNUAtime    = 345 // [12] GNU
	offGNUCtime    = 357 // [12] GNU
	offGNUSparse   = 386 // [4][24] GNU sparse map
	offGNUExtended = 482 // [1] GNU: more sparse blocks follow
	offGNURealSize = 483 // [12] GNU: sparse file's logical size
	offSTARTrailer = 508 // [4] star: "tar\x00"
)

// Format is the header dialect a block was written in, as told by its magic.
type Format uint8

const (
	FormatV7    Format = iota // no magic: original Unix v7
	FormatUSTAR               // "ustar\x00": POSIX ustar, and pax
	FormatGNU                 // "ustar  \x00": GNU and old GNU
	FormatSTAR                // ustar magic with "tar\x00" trailer: Schily star
)

func (f Format) String() string {
	switch f {
	case FormatUSTAR:
		return "ustar"
	case FormatGNU:
		return "gnu"
	case FormatSTAR:
		return "star"
	}
	return "v7"
}

var zeroBlock [BlockSize]byte

func isZeroBlock(b []byte) bool { return bytes.Equal(b, zeroBlock[:]) }

// cString returns b up to its first NUL byte.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

// parseOctal reads an octal field the way tar readers do: NULs and spaces
// around the digits are ignored and an empty field is zero.
func parseOctal(b []byte) (int64, bool) {
	if v, ok := fixedOctal(b); ok {
		return v, true
	}
	return octalLoop(b)
}

// octalLoop is parseOctal for any shape of field, a byte at a time.
func octalLoop(b []byte) (int64, bool) {
	// One pass, no trimming helpers: this runs six times per header.
	i := 0
	for i < len(b) && (b[i] == ' ' || b[i] == 0) {
		i++
	}
	var x uint64
	for ; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '7' {
			break
		}
		if x>>61 != 0 {
			return 0, false
		}
		x = x<<3 | uint64(c-'0')
	}
	// After the digits: a NUL ends the string (anything may follow it);
	// a space must be trailing padding, spaces and NULs to the end.
	if i < len(b) && b[i] != 0 {
		for ; i < len(b); i++ {
			if b[i] != ' ' && b[i] != 0 {
				return 0, false
			}
		}
	}
	if x>>63 != 0 {
		return 0, false
	}
	return int64(x), true
}

// fixedOctal reads the common shape of the 8- and 12-byte fields, as
// tar, Python's tarfile and Go's archive/tar write them: every byte an
// octal digit but the last, a NUL or a space (or, for the checksum, all
// but the last two, a NUL and a space). It reads eight digits at
// once (each byte's digit in its low three bits, then pairs, fours and
// eights joined in a few shifts) where the loop takes a byte at a time:
// the fields were 8% of a scan of tiny members. Any other shape is false,
// for parseOctal's loop to read.
func fixedOctal(b []byte) (int64, bool) {
	switch len(b) {
	case 8:
		return fixedOctal8(b)
	case 12:
		return fixedOctal12(b)
	}
	return 0, false
}

const (
	octalHigh  = 0xf8f8f8f8f8f8f8f8 // a byte's bits above its digit
	octalZeros = 0x3030303030303030 // '0' in every byte
	octalLow   = 0x0707070707070707 // a byte's digit
)

// fixedOctal8 is fixedOctal of an 8-byte field: seven digits and the end,
// or the checksum's six, NUL, space.
func fixedOctal8(b []byte) (int64, bool) {
	shift := 8
	switch {
	case b[6] == 0 && b[7] == ' ':
		shift = 16
	case b[7] != 0 && b[7] != ' ':
		return 0, false
	}
	x := binary.LittleEndian.Uint64(b) << shift // the end gone, leading zero digits in
	if x&octalHigh != octalZeros&^(1<<shift-1) {
		return 0, false
	}
	return int64(octal8(x & octalLow)), true
}

// fixedOctal12 is fixedOctal of a 12-byte field: eleven digits and the
// end.
func fixedOctal12(b []byte) (int64, bool) {
	if b[11] != 0 && b[11] != ' ' {
		return 0, false
	}
	x := binary.LittleEndian.Uint64(b)
	y := uint64(binary.LittleEndian.Uint32(b[8:])) << 40 // the last three digits, at the top
	if x&octalHigh != octalZeros || y&octalHigh != octalZeros&^(1<<40-1) {
		return 0, false
	}
	return int64(octal8(x&octalLow)<<9 | octal8(y&octalLow)), true
}

// octal8 joins eight octal digits, one a byte, the first in the lowest
// byte (the order they are read from a field in), into their value.
func octal8(d uint64) uint64 {
	d = (d&0x00ff00ff00ff00ff)<<3 | (d>>8)&0x00ff00ff00ff00ff  // pairs, in 16-bit lanes
	d = (d&0x0000ffff0000ffff)<<6 | (d>>16)&0x0000ffff0000ffff // fours, in 32-bit lanes
	return (d&0xffffffff)<<12 | d>>32
}

// parseNumeric reads a numeric field that is either octal or, when the top
// bit of the first byte is set, GNU base-256 (two's complement, big-endian).
func parseNumeric(b []byte) (int64, bool) {
	if len(b) == 0 || b[0]&0x80 == 0 {
		return parseOctal(b)
	}
	var inv byte // 0xff for negative numbers: -a-1 == ^a
	if b[0]&0x40 != 0 {
		inv = 0xff
	}
	var x uint64
	for i, c := range b {
		c ^= inv
		if i == 0 {
			c &= 0x7f
		}
		if x>>56 != 0 {
			return 0, false
		}
		x = x<<8 | uint64(c)
	}
	if x>>63 != 0 {
		return 0, false
	}
	if inv == 0xff {
		return ^int64(x), true
	}
	return int64(x), true
}

// checksums returns the unsigned and signed sums of a header block with its
// checksum field counted as spaces. Historic writers used either.
func checksums(b []byte) (unsigned, signed int64) {
	unsigned = unsignedSum(b)
	for i, c := range b {
		if i >= offChksum && i < offChksum+8 {
			c = ' '
		}
		signed += int64(int8(c))
	}
	return unsigned, signed
}

// unsignedSum is the sum of the block's bytes, the checksum field counted
// as spaces: the hot path of every scan.
func unsignedSum(b []byte) int64 {
	b = b[:BlockSize]
	sum := int64(byteSum(b))
	for _, c := range b[offChksum : offChksum+8] {
		sum += int64(' ') - int64(c)
	}
	return sum
}

// byteSumGo adds a block's bytes eight at a time, where no instruction
// does it faster (sum_amd64.go): four accumulators of four 16-bit lanes
// each (at most 16*510 a lane) let the additions run side by side, twice
// the speed of one.
func byteSumGo(b []byte) uint64 {
	const lo = 0x00ff00ff00ff00ff
	b = b[:BlockSize]
	var a0, a1, a2, a3 uint64
	for i := 0; i < BlockSize; i += 32 {
		w0 := binary.LittleEndian.Uint64(b[i:])
		w1 := binary.LittleEndian.Uint64(b[i+8:])
		w2 := binary.LittleEndian.Uint64(b[i+16:])
		w3 := binary.LittleEndian.Uint64(b[i+24:])
		a0 += w0&lo + (w0>>8)&lo
		a1 += w1&lo + (w1>>8)&lo
		a2 += w2&lo + (w2>>8)&lo
		a3 += w3&lo + (w3>>8)&lo
	}
	acc := a0 + a1 + a2 + a3 // at most 4*16*510 a lane
	acc = acc&0x0000ffff0000ffff + acc>>16&0x0000ffff0000ffff
	return acc&0xffffffff + acc>>32
}

// checksumOK reports whether the block's stored checksum matches.
func checksumOK(b []byte) bool {
	stored, ok := parseOctal(b[offChksum : offChksum+8])
	if !ok {
		return false
	}
	if stored == unsignedSum(b) {
		return true
	}
	_, signed := checksums(b)
	return stored == signed
}

// formatOf tells the dialect of a block whose checksum is valid.
func formatOf(b []byte) Format {
	magic := string(b[offMagic : offMagic+6])
	switch {
	case magic == "ustar\x00" && string(b[offSTARTrailer:offSTARTrailer+4]) == "tar\x00":
		return FormatSTAR
	case magic == "ustar\x00":
		return FormatUSTAR
	case magic == "ustar " && string(b[offVersion:offVersion+2]) == " \x00":
		return FormatGNU
	}
	return FormatV7
}

// isASCII reports whether b has no byte above 0x7f.
func isASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 {
			return false
		}
	}
	return true
}

// compressedMagic names the compression of a file that starts with b, or "".
func compressedMagic(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0x1f, 0x8b}):
		return "gzip"
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "zstd"
	case bytes.HasPrefix(b, []byte("BZh")):
		return "bzip2"
	case bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0x00}):
		return "xz"
	case bytes.HasPrefix(b, []byte{0x04, 0x22, 0x4d, 0x18}):
		return "lz4"
	case bytes.HasPrefix(b, []byte{0x1f, 0x9d}):
		return "compress (.Z)"
	}
	return ""
}

// parsePAXRecords parses "%d %s=%s\n" records into recs, in order.
// It returns false on any malformed record.
func parsePAXRecords(data []byte, recs []PAXRecord) ([]PAXRecord, bool) {
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return recs, false
		}
		n, err := strconv.ParseInt(string(data[:sp]), 10, 0)
		if err != nil || n < 5 || n > int64(len(data)) || n <= int64(sp+1) {
			return recs, false
		}
		rec := data[sp+1 : n]
		if rec[len(rec)-1] != '\n' {
			return recs, false
		}
		rec = rec[:len(rec)-1]
		eq := bytes.IndexByte(rec, '=')
		if eq <= 0 {
			return recs, false
		}
		k, v := string(rec[:eq]), string(rec[eq+1:])
		switch k {
		case "path", "linkpath", "uname", "gname":
			if bytes.IndexByte(rec[eq+1:], 0) >= 0 {
				return recs, false
			}
		default:
			if bytes.IndexByte(rec[:eq], 0) >= 0 {
				return recs, false
			}
		}
		recs = append(recs, PAXRecord{Key: k, Value: v})
		data = data[n:]
	}
	return recs, true
}

// parsePAXTime parses a pax time value "sec[.frac]" into seconds and
// nanoseconds (truncated past nanoseconds, as tar readers do).
func parsePAXTime(s string) (sec int64, nsec int32, ok bool) {
	whole, frac, _ := cutByte(s, '.')
	neg := len(whole) > 0 && whole[0] == '-'
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	if frac == "" {
		return sec, 0, true
	}
	var ns int64
	for i := 0; i < 9; i++ {
		ns *= 10
		if i < len(frac) {
			c := frac[i]
			if c < '0' || c > '9' {
				return 0, 0, false
			}
			ns += int64(c - '0')
		}
	}
	for i := 9; i < len(frac); i++ {
		if frac[i] < '0' || frac[i] > '9' {
			return 0, 0, false
		}
	}
	if neg && ns != 0 {
		sec--
		ns = 1e9 - ns
	}
	return sec, int32(ns), true
}

func cutByte(s string, c byte) (before, after string, found bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
