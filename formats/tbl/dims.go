package tbl

import "encoding/binary"

// ImageDimensions returns the width and height TurboLoader's v2 converter
// (tar_to_tbl_v2) stores in a sample's index entry: what its header sniffer
// (utils/image_dimensions.hpp, detect_image_dimensions) makes of the bytes,
// quirks included, so that a v2 index written with it matches the
// converter's byte for byte. (0, 0) means "unknown", as in TurboLoader.
//
// The sniffer reads headers only, never decodes, and checks little: it is
// reproduced here rule for rule, not improved on. In short:
//
//   - Anything under 16 bytes is (0, 0), whatever the format.
//   - FormatUnknown is sniffed by magic (FF D8 FF: JPEG; 89 'P' 'N' 'G':
//     PNG; "RIFF" ... "WEBP": WebP; "BM": BMP; "II" or "MM": TIFF) and then
//     parsed as that format, as TurboLoader does when it is given UNKNOWN.
//     Its converter never does (it skips samples of unknown format), so
//     this matters only to other callers.
//   - MP4, AVI, RAW_U8 and codes TurboLoader does not know are (0, 0).
//   - Values wider than 16 bits saturate at 65535, except where a format's
//     field cannot exceed 16 bits (JPEG, WebP VP8 and VP8L).
//
// The per-format functions below describe each parser's quirks. Where
// TurboLoader's C++ reads out of bounds (TIFF IFD offsets 0xFFFFFFFE and
// 0xFFFFFFFF), its result is undefined, and most likely a crash; this
// function returns (0, 0) there. It never panics.
func ImageDimensions(f Format, data []byte) (width, height uint16) {
	if len(data) < 16 {
		return 0, 0
	}
	if f == FormatUnknown {
		f = sniffFormat(data)
	}
	switch f {
	case JPEG:
		return jpegDims(data)
	case PNG:
		return pngDims(data)
	case WEBP:
		return webpDims(data)
	case BMP:
		return bmpDims(data)
	case TIFF:
		return tiffDims(data)
	}
	return 0, 0
}

// sniffFormat is TurboLoader's magic sniffing for UNKNOWN samples (data has
// at least 16 bytes). The tests run in this order. JPEG wants FF D8 FF here
// though its parser only checks FF D8; PNG only the first four bytes of its
// eight-byte signature; TIFF only the byte-order mark, not the 42 after it.
func sniffFormat(d []byte) Format {
	switch {
	case d[0] == 0xFF && d[1] == 0xD8 && d[2] == 0xFF:
		return JPEG
	case d[0] == 0x89 && d[1] == 'P' && d[2] == 'N' && d[3] == 'G':
		return PNG
	case string(d[0:4]) == "RIFF" && string(d[8:12]) == "WEBP":
		return WEBP
	case d[0] == 'B' && d[1] == 'M':
		return BMP
	case (d[0] == 'I' && d[1] == 'I') || (d[0] == 'M' && d[1] == 'M'):
		return TIFF
	}
	return FormatUnknown
}

// saturate16 clamps a 32-bit dimension to uint16 as TurboLoader does
// (anything above 65535 becomes 65535, never truncated).
func saturate16(v uint32) uint16 {
	if v > 0xFFFF {
		return 0xFFFF
	}
	return uint16(v)
}

// jpegDims scans for the first start-of-frame marker. TurboLoader's walk:
//
//   - Only FF D8 at the start is checked; what follows may be anything.
//   - A cursor starts at 2 and the scan runs only while cursor+9 < len: a
//     marker in the last 10 bytes is never looked at.
//   - A byte that is not FF advances the cursor by one: the scan resyncs on
//     any FF, including ones inside entropy-coded data after SOS.
//   - At an FF, the next byte is the marker and the cursor moves past both.
//     While the marker is FF (fill bytes) and bytes remain, the next byte
//     becomes the marker.
//   - SOF markers are C0-C3, C5-C7, C9-CB and CD-CF (not DHT C4, JPG C8,
//     DAC CC). At one, if fewer than 7 bytes remain after the marker the
//     scan stops with (0, 0); otherwise height and width are the big-endian
//     u16s 3 and 5 bytes after it (after the length and precision), and
//     they are returned even when zero. The length is not checked.
//   - Any other marker, standalone ones included (SOI, EOI, RSTn, TEM, and
//     the 00 of a stuffed FF 00), is taken to have a big-endian u16 length
//     right after it: if fewer than 2 bytes remain the scan stops, otherwise
//     the cursor jumps by that length, counted from the length field
//     itself. A length of 0 or 1 is not rejected; the byte-by-byte resync
//     then carries on from wherever it lands.
func jpegDims(d []byte) (width, height uint16) {
	n := len(d)
	if n < 3 || d[0] != 0xFF || d[1] != 0xD8 {
		return 0, 0
	}
	pos := 2
	for pos+9 < n {
		if d[pos] != 0xFF {
			pos++
			continue
		}
		marker := d[pos+1]
		pos += 2
		for pos < n && marker == 0xFF {
			marker = d[pos]
			pos++
		}
		if isSOF(marker) {
			if pos+7 > n {
				break
			}
			return binary.BigEndian.Uint16(d[pos+5:]), binary.BigEndian.Uint16(d[pos+3:])
		}
		if pos+2 > n {
			break
		}
		pos += int(binary.BigEndian.Uint16(d[pos:]))
	}
	return 0, 0
}

// isSOF reports whether a JPEG marker is one TurboLoader reads dimensions
// from: C0-CF except C4, C8 and CC.
func isSOF(m byte) bool {
	return m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC
}

// pngDims reads the IHDR. TurboLoader wants 24 bytes, checks only the first
// four signature bytes (89 'P' 'N' 'G', not CR LF SUB LF) and the chunk type
// "IHDR" at 12, not the chunk length at 8 nor any CRC. Width and height are
// the big-endian u32s at 16 and 20, saturated at 65535.
func pngDims(d []byte) (width, height uint16) {
	if len(d) < 24 || d[0] != 0x89 || d[1] != 'P' || d[2] != 'N' || d[3] != 'G' {
		return 0, 0
	}
	if string(d[12:16]) != "IHDR" {
		return 0, 0
	}
	be := binary.BigEndian
	return saturate16(be.Uint32(d[16:])), saturate16(be.Uint32(d[20:]))
}

// webpDims reads the first chunk of a RIFF/WEBP file. TurboLoader wants 30
// bytes for every variant (so a 25- to 29-byte VP8L file, whose header would
// fit, is (0, 0)), checks "RIFF" and "WEBP" but not the RIFF size, and
// reads the chunk at 12 without its size field:
//
//   - "VP8 ": the little-endian u16s at 26 and 28, low 14 bits each (the
//     scale bits dropped); the frame tag and start code (9D 01 2A) are not
//     checked.
//   - "VP8L": the little-endian u32 at 21: width is bits 0-13 plus one,
//     height bits 14-27 plus one; the 0x2F signature at 20 is not checked.
//   - "VP8X": the 24-bit little-endian values at 24 and 27, plus one,
//     saturated at 65535.
//
// Any other chunk is (0, 0).
func webpDims(d []byte) (width, height uint16) {
	if len(d) < 30 || string(d[0:4]) != "RIFF" || string(d[8:12]) != "WEBP" {
		return 0, 0
	}
	le := binary.LittleEndian
	switch string(d[12:16]) {
	case "VP8 ":
		return le.Uint16(d[26:]) & 0x3FFF, le.Uint16(d[28:]) & 0x3FFF
	case "VP8L":
		bits := le.Uint32(d[21:])
		return uint16(bits&0x3FFF) + 1, uint16(bits>>14&0x3FFF) + 1
	case "VP8X":
		w := uint32(d[24]) | uint32(d[25])<<8 | uint32(d[26])<<16
		h := uint32(d[27]) | uint32(d[28])<<8 | uint32(d[29])<<16
		return saturate16(w + 1), saturate16(h + 1)
	}
	return 0, 0
}

// bmpDims reads the dimensions of a BITMAPINFOHEADER-style BMP. TurboLoader
// wants 26 bytes and "BM", and reads the little-endian u32s at 18 and 22
// whatever the DIB header's size, so an OS/2 BITMAPCOREHEADER's 16-bit
// fields are read as 32-bit ones (width | height<<16, and the planes and
// bit count as height). A negative height (top-down) is negated; a negative
// width is not, and saturates at 65535 like any value above it. Negating
// height -2^31 overflows in C++ (undefined); in practice it stays 2^31 and
// saturates, which is what this returns.
func bmpDims(d []byte) (width, height uint16) {
	if len(d) < 26 || d[0] != 'B' || d[1] != 'M' {
		return 0, 0
	}
	le := binary.LittleEndian
	w := le.Uint32(d[18:])
	h := le.Uint32(d[22:])
	if h&0x80000000 != 0 {
		h = -h // two's complement: 2^31 stays 2^31
	}
	return saturate16(w), saturate16(h)
}

// tiffDims reads the first IFD. TurboLoader's rules:
//
//   - Only the byte order mark "II" or "MM" is checked, not the 42.
//   - The IFD offset is a u32 in that byte order. The bound check adds 2 to
//     it in 32 bits, so offsets 0xFFFFFFFE and 0xFFFFFFFF wrap and pass, and
//     the C++ then reads 4 GiB past the buffer: undefined behaviour,
//     normally a crash. This returns (0, 0) for them. Otherwise the offset
//     must leave 2 bytes for the entry count, and an IFD with no room for a
//     full entry yields (0, 0).
//   - Entries are read while whole ones (12 bytes) fit, up to the count.
//     The value is always the u32 at entry+8 in the file's byte order,
//     whatever the entry's type: a SHORT in a big-endian file sits in the
//     high half, so a width of w reads as w<<16 and saturates at 65535 (and
//     in a little-endian file nonzero padding after a SHORT counts).
//   - Tag 256 sets the width, 257 the height, a later duplicate overriding
//     an earlier one; the walk stops after the first entry that leaves both
//     nonzero. One of them may stay 0.
//   - Both saturate at 65535.
func tiffDims(d []byte) (width, height uint16) {
	n := len(d)
	if n < 8 {
		return 0, 0
	}
	var bo binary.ByteOrder
	switch {
	case d[0] == 'I' && d[1] == 'I':
		bo = binary.LittleEndian
	case d[0] == 'M' && d[1] == 'M':
		bo = binary.BigEndian
	default:
		return 0, 0
	}
	ifd := bo.Uint32(d[4:])
	if ifd >= 0xFFFFFFFE || uint64(ifd)+2 > uint64(n) {
		return 0, 0
	}
	count := int(bo.Uint16(d[ifd:]))
	var w, h uint32
	off := int(ifd) + 2
	for i := 0; i < count && off+12 <= n; i++ {
		e := d[off : off+12]
		switch bo.Uint16(e) {
		case 256:
			w = bo.Uint32(e[8:])
		case 257:
			h = bo.Uint32(e[8:])
		}
		off += 12
		if w > 0 && h > 0 {
			break
		}
	}
	return saturate16(w), saturate16(h)
}
