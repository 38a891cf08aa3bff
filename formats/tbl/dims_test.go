package tbl

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestImageDimensionsConformance requires, for every sample TurboLoader's
// v2 converter wrote, the width and height its index holds, computed from
// the sample's bytes as the converter picked them from the tar.
func TestImageDimensionsConformance(t *testing.T) {
	for _, dir := range confCases(t) {
		c := filepath.Base(dir)
		tarBytes, err := os.ReadFile(filepath.Join(dir, c+".tar"))
		if err != nil {
			t.Fatal(err)
		}
		sel := upstreamSelect(t, tarBytes, 2)
		for _, variant := range []string{"v2raw", "v2lz4"} {
			d := parseDump(t, filepath.Join(dir, c+"."+variant+".dump.txt"))
			if len(sel) != len(d.samples) {
				t.Fatalf("%s/%s: %d samples selected, dump has %d", c, variant, len(sel), len(d.samples))
			}
			for i, s := range d.samples {
				f := Format(num(t, s, "format"))
				w, h := ImageDimensions(f, sel[i])
				if uint64(w) != num(t, s, "w") || uint64(h) != num(t, s, "h") {
					t.Errorf("%s/%s: sample %d (%v, %s): got %dx%d, upstream %sx%s",
						c, variant, i, f, d.members[i], w, h, s["w"], s["h"])
				}
			}
		}
	}
}

// pad appends zeros up to n bytes.
func pad(b []byte, n int) []byte {
	for len(b) < n {
		b = append(b, 0)
	}
	return b
}

func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func be16(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// sof is a JPEG start-of-frame segment with the given marker.
func sof(marker byte, w, h uint16) []byte {
	return cat([]byte{0xFF, marker, 0x00, 0x11, 0x08}, be16(h), be16(w), []byte{3, 1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1})
}

var soi = []byte{0xFF, 0xD8}

func png(w, h uint32) []byte {
	return cat([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}, be32(13), []byte("IHDR"), be32(w), be32(h), []byte{8, 2, 0, 0, 0}, be32(0))
}

func webp(chunk string, body []byte) []byte {
	return pad(cat([]byte("RIFF"), le32(100), []byte("WEBP"), []byte(chunk), le32(uint32(len(body))), body), 30)
}

func vp8(w, h uint16) []byte {
	return cat([]byte{0x10, 0x02, 0x00, 0x9D, 0x01, 0x2A}, le16(w), le16(h))
}

func vp8l(w, h uint32) []byte {
	return cat([]byte{0x2F}, le32((w-1)&0x3FFF|((h-1)&0x3FFF)<<14))
}

func vp8x(w, h uint32) []byte {
	w--
	h--
	return []byte{0x10, 0, 0, 0, byte(w), byte(w >> 8), byte(w >> 16), byte(h), byte(h >> 8), byte(h >> 16)}
}

func bmp(dibSize uint32, rest ...[]byte) []byte {
	return pad(cat([]byte("BM"), le32(200), le32(0), le32(54), le32(dibSize), cat(rest...)), 54)
}

type tiffEntry struct {
	tag, typ uint16
	value    []byte // 4 bytes
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func tiff(bo byteOrder, ifd uint32, entries ...tiffEntry) []byte {
	b := []byte("II")
	if bo == binary.BigEndian {
		b = []byte("MM")
	}
	b = bo.AppendUint16(b, 42)
	b = bo.AppendUint32(b, ifd)
	b = pad(b, int(min(ifd, 64)))
	b = bo.AppendUint16(b, uint16(len(entries)))
	for _, e := range entries {
		b = bo.AppendUint16(b, e.tag)
		b = bo.AppendUint16(b, e.typ)
		b = bo.AppendUint32(b, 1)
		b = append(b, e.value...)
	}
	return pad(append(b, 0, 0, 0, 0), 16)
}

func long(bo byteOrder, v uint32) []byte { return bo.AppendUint32(nil, v) }
func short(bo byteOrder, v uint16) []byte {
	return append(bo.AppendUint16(nil, v), 0, 0)
}

var le, be byteOrder = binary.LittleEndian, binary.BigEndian

type dimCase struct {
	name string
	f    Format
	data []byte
	w, h uint16
}

func dimCases() []dimCase {
	jpegOK := pad(cat(soi, sof(0xC0, 48, 32)), 40)
	tiffLE := tiff(le, 8, tiffEntry{256, 4, long(le, 9)}, tiffEntry{257, 4, long(le, 11)})
	return []dimCase{
		// JPEG
		{"jpeg/baseline", JPEG, jpegOK, 48, 32},
		{"jpeg/truncated-15", JPEG, jpegOK[:15], 0, 0},
		{"jpeg/no-soi", JPEG, jpegOK[1:], 0, 0},
		{"jpeg/progressive-c2", JPEG, pad(cat(soi, sof(0xC2, 640, 480)), 40), 640, 480},
		{"jpeg/lossless-cf", JPEG, pad(cat(soi, sof(0xCF, 7, 9)), 40), 7, 9},
		{"jpeg/app0-then-sof", JPEG, pad(cat(soi, []byte{0xFF, 0xE0, 0, 6, 'J', 'F', 'I', 'F'}, sof(0xC1, 3, 2)), 40), 3, 2},
		// DHT, JPG and DAC are not frames: their lengths are skipped.
		{"jpeg/c4-c8-cc-skipped", JPEG, pad(cat(soi, []byte{0xFF, 0xC4, 0, 3, 0, 0xFF, 0xC8, 0, 2, 0xFF, 0xCC, 0, 2}, sof(0xC0, 5, 6)), 50), 5, 6},
		{"jpeg/only-dht", JPEG, pad(cat(soi, sof(0xC4, 5, 6)), 40), 0, 0},
		{"jpeg/fill-bytes", JPEG, pad(cat(soi, []byte{0xFF, 0xFF, 0xFF}, sof(0xC0, 11, 12)), 40), 11, 12},
		{"jpeg/junk-resync", JPEG, pad(cat(soi, []byte{1, 2, 3, 4}, sof(0xC0, 13, 14)), 40), 13, 14},
		{"jpeg/sof-zero-dims", JPEG, pad(cat(soi, sof(0xC0, 0, 0)), 40), 0, 0},
		// A standalone RST0 is taken to have a length: FF C0 = 65472.
		{"jpeg/rst-has-length", JPEG, pad(cat(soi, []byte{0xFF, 0xD0}, sof(0xC0, 5, 6)), 40), 0, 0},
		// A zero length leaves the cursor on it; the resync finds the SOF.
		{"jpeg/zero-length", JPEG, pad(cat(soi, []byte{0xFF, 0xE1, 0, 0}, sof(0xC0, 15, 16)), 40), 15, 16},
		{"jpeg/length-past-end", JPEG, pad(cat(soi, []byte{0xFF, 0xE1, 0xFF, 0xF0}, sof(0xC0, 15, 16)), 40), 0, 0},
		// Markers in the last 10 bytes are never looked at: FF at n-10 is.
		{"jpeg/sof-at-n-10", JPEG, cat(soi, make([]byte, 6), []byte{0xFF, 0xC0, 0, 0x11, 8, 0, 0x10, 0, 0x20, 0}), 32, 16},
		{"jpeg/sof-at-n-9", JPEG, cat(soi, make([]byte, 6), []byte{0xFF, 0xC0, 0, 0x11, 8, 0, 0x10, 0, 0x20}), 0, 0},
		// After fill bytes, an SOF needs 7 bytes after the marker.
		{"jpeg/fill-then-short-sof", JPEG, cat(soi, make([]byte, 6), []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xC0, 0, 0x11, 8, 0, 0x10, 0}), 0, 0},
		{"jpeg/fill-to-end", JPEG, cat(soi, []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}), 0, 0},
		{"jpeg/no-sof", JPEG, pad(soi, 64), 0, 0},

		// PNG
		{"png/valid", PNG, png(3, 2), 3, 2},
		{"png/saturated", PNG, png(70000, 0xFFFFFFFF), 65535, 65535},
		{"png/exactly-65535", PNG, png(65535, 1), 65535, 1},
		{"png/truncated-23", PNG, png(3, 2)[:23], 0, 0},
		{"png/24-bytes", PNG, png(3, 2)[:24], 3, 2},
		{"png/half-signature", PNG, cat([]byte{0x89, 'P', 'N', 'G', 0, 0, 0, 0}, png(3, 2)[8:]), 3, 2},
		{"png/bad-signature", PNG, cat([]byte{0x89, 'P', 'N', 'g'}, png(3, 2)[4:]), 0, 0},
		{"png/not-ihdr", PNG, cat(png(3, 2)[:12], []byte("IDAT"), png(3, 2)[16:]), 0, 0},
		{"png/zeros", PNG, make([]byte, 64), 0, 0},

		// WebP
		{"webp/vp8", WEBP, webp("VP8 ", vp8(64, 40)), 64, 40},
		{"webp/vp8-scale-bits", WEBP, webp("VP8 ", vp8(0xC000|64, 0x4000|40)), 64, 40},
		{"webp/vp8-truncated-29", WEBP, webp("VP8 ", vp8(64, 40))[:29], 0, 0},
		{"webp/vp8l", WEBP, webp("VP8L", vp8l(100, 200)), 100, 200},
		{"webp/vp8l-max", WEBP, webp("VP8L", vp8l(16384, 16384)), 16384, 16384},
		// 25 bytes hold a VP8L header, but every variant wants 30.
		{"webp/vp8l-25", WEBP, webp("VP8L", vp8l(100, 200))[:25], 0, 0},
		{"webp/vp8x", WEBP, webp("VP8X", vp8x(300, 200)), 300, 200},
		{"webp/vp8x-saturated", WEBP, webp("VP8X", vp8x(1<<24, 65536)), 65535, 65535},
		{"webp/vp8x-65535", WEBP, webp("VP8X", vp8x(65535, 1)), 65535, 1},
		{"webp/alph", WEBP, webp("ALPH", vp8(64, 40)), 0, 0},
		{"webp/not-webp", WEBP, cat([]byte("RIFF\x00\x00\x00\x00WAVE"), webp("VP8 ", vp8(64, 40))[12:]), 0, 0},
		{"webp/not-riff", WEBP, cat([]byte("RIFX"), webp("VP8 ", vp8(64, 40))[4:]), 0, 0},

		// BMP
		{"bmp/valid", BMP, bmp(40, le32(5), le32(7)), 5, 7},
		{"bmp/top-down", BMP, bmp(40, le32(5), le32(uint32(0x100000000-7))), 5, 7},
		{"bmp/negative-width", BMP, bmp(40, le32(uint32(0x100000000-5)), le32(7)), 65535, 7},
		{"bmp/height-int32-min", BMP, bmp(40, le32(5), le32(0x80000000)), 5, 65535},
		{"bmp/saturated", BMP, bmp(40, le32(70000), le32(65536)), 65535, 65535},
		{"bmp/truncated-25", BMP, bmp(40, le32(5), le32(7))[:25], 0, 0},
		{"bmp/26-bytes", BMP, bmp(40, le32(5), le32(7))[:26], 5, 7},
		// OS/2 core header: u16 fields read as u32s.
		{"bmp/os2-core", BMP, bmp(12, le16(5), le16(7), le16(1), le16(24)), 65535, 65535},
		{"bmp/os2-core-zero-height", BMP, bmp(12, le16(5), le16(0), le16(0), le16(0)), 5, 0},
		{"bmp/bad-magic", BMP, cat([]byte("BA"), bmp(40, le32(5), le32(7))[2:]), 0, 0},

		// TIFF
		{"tiff/le-long", TIFF, tiffLE, 9, 11},
		{"tiff/le-short", TIFF, tiff(le, 8, tiffEntry{256, 3, short(le, 9)}, tiffEntry{257, 3, short(le, 11)}), 9, 11},
		// Padding after a little-endian SHORT counts.
		{"tiff/le-short-dirty", TIFF, tiff(le, 8, tiffEntry{256, 3, []byte{9, 0, 1, 0}}, tiffEntry{257, 3, short(le, 11)}), 65535, 11},
		{"tiff/be-long", TIFF, tiff(be, 8, tiffEntry{256, 4, long(be, 9)}, tiffEntry{257, 4, long(be, 11)}), 9, 11},
		// A big-endian SHORT is read as a u32: w<<16.
		{"tiff/be-short", TIFF, tiff(be, 8, tiffEntry{256, 3, short(be, 9)}, tiffEntry{257, 3, short(be, 11)}), 65535, 65535},
		{"tiff/be-short-zero", TIFF, tiff(be, 8, tiffEntry{256, 3, short(be, 0)}, tiffEntry{257, 4, long(be, 11)}), 0, 11},
		{"tiff/width-only", TIFF, tiff(le, 8, tiffEntry{256, 4, long(le, 9)}), 9, 0},
		{"tiff/saturated", TIFF, tiff(le, 8, tiffEntry{256, 4, long(le, 1<<20)}, tiffEntry{257, 4, long(le, 65536)}), 65535, 65535},
		// A later duplicate overrides while the other is still 0...
		{"tiff/duplicate", TIFF, tiff(le, 8, tiffEntry{256, 4, long(le, 9)}, tiffEntry{256, 4, long(le, 12)}, tiffEntry{257, 4, long(le, 11)}), 12, 11},
		// ...but the walk stops once both are set.
		{"tiff/stops", TIFF, tiff(le, 8, tiffEntry{256, 4, long(le, 9)}, tiffEntry{257, 4, long(le, 11)}, tiffEntry{256, 4, long(le, 12)}), 9, 11},
		{"tiff/zero-then-set", TIFF, tiff(le, 8, tiffEntry{256, 4, long(le, 0)}, tiffEntry{257, 4, long(le, 11)}, tiffEntry{256, 4, long(le, 12)}), 12, 11},
		{"tiff/no-42", TIFF, cat([]byte("II\x00\x00"), tiffLE[4:]), 9, 11},
		{"tiff/bad-order", TIFF, cat([]byte("IM"), tiffLE[2:]), 0, 0},
		{"tiff/ifd-past-end", TIFF, cat(tiffLE[:4], le32(uint32(len(tiffLE)-1)), tiffLE[8:]), 0, 0},
		{"tiff/ifd-at-end-2", TIFF, cat(tiffLE[:4], le32(uint32(len(tiffLE)-2)), tiffLE[8:]), 0, 0},
		// Upstream's bound check wraps here and it reads out of bounds.
		{"tiff/ifd-fffffffe", TIFF, cat(tiffLE[:4], le32(0xFFFFFFFE), tiffLE[8:]), 0, 0},
		{"tiff/ifd-ffffffff", TIFF, cat(tiffLE[:4], le32(0xFFFFFFFF), tiffLE[8:]), 0, 0},
		// Entries are read while whole ones fit.
		{"tiff/truncated-entry", TIFF, tiffLE[:8+2+12+11], 9, 0},
		{"tiff/count-too-big", TIFF, cat(tiffLE[:8], le16(0xFFFF), tiffLE[10:]), 9, 11},
		{"tiff/count-zero", TIFF, cat(tiffLE[:8], le16(0), tiffLE[10:]), 0, 0},
		{"tiff/ifd-overlaps-header", TIFF, pad(cat([]byte("II"), le16(0), le32(0), le16(0)), 40), 0, 0},

		// Formats that have no parser, and short input.
		{"mp4", MP4, pad([]byte("\x00\x00\x00\x1cftypisom"), 28), 0, 0},
		{"avi", AVI, pad([]byte("RIFF\x00\x00\x00\x00AVI LIST"), 32), 0, 0},
		{"raw", RAWU8, jpegOK, 0, 0},
		{"unknown-code", Format(9), jpegOK, 0, 0},
		{"unknown-code-255", Format(255), png(3, 2), 0, 0},
		{"nil", JPEG, nil, 0, 0},
		{"empty", PNG, []byte{}, 0, 0},
		{"short-15", TIFF, tiffLE[:15], 0, 0},

		// FormatUnknown is sniffed, as upstream does for UNKNOWN.
		{"sniff/jpeg", FormatUnknown, jpegOK, 48, 32},
		{"sniff/jpeg-needs-ff", FormatUnknown, pad(cat(soi, []byte{0}, sof(0xC0, 48, 32)), 40), 0, 0},
		{"sniff/png", FormatUnknown, png(3, 2), 3, 2},
		{"sniff/webp", FormatUnknown, webp("VP8L", vp8l(100, 200)), 100, 200},
		{"sniff/bmp", FormatUnknown, bmp(40, le32(5), le32(7)), 5, 7},
		{"sniff/tiff-le", FormatUnknown, tiffLE, 9, 11},
		{"sniff/tiff-be", FormatUnknown, tiff(be, 8, tiffEntry{256, 4, long(be, 9)}, tiffEntry{257, 4, long(be, 11)}), 9, 11},
		{"sniff/nothing", FormatUnknown, pad([]byte("GIF89a"), 32), 0, 0},
		{"sniff/short", FormatUnknown, png(3, 2)[:15], 0, 0},
		// A RIFF that is not WEBP falls through to the later tests.
		{"sniff/riff-not-webp", FormatUnknown, pad([]byte("RIFF\x00\x00\x00\x00AVI "), 32), 0, 0},
	}
}

func TestImageDimensions(t *testing.T) {
	for _, c := range dimCases() {
		t.Run(c.name, func(t *testing.T) {
			w, h := ImageDimensions(c.f, c.data)
			if w != c.w || h != c.h {
				t.Errorf("%v, %d bytes %x: got %dx%d, want %dx%d", c.f, len(c.data), c.data, w, h, c.w, c.h)
			}
		})
	}
}

// FuzzImageDimensions checks that no input panics, that formats without a
// parser always give 0x0, and that FormatUnknown gives what the sniffed
// format does.
func FuzzImageDimensions(f *testing.F) {
	for _, c := range dimCases() {
		f.Add(uint8(c.f), c.data)
	}
	f.Fuzz(func(t *testing.T, code uint8, data []byte) {
		w, h := ImageDimensions(Format(code), data)
		if (code > uint8(TIFF) || len(data) < 16) && (w != 0 || h != 0) {
			t.Fatalf("%v: %dx%d from %d bytes", Format(code), w, h, len(data))
		}
		// Every parser runs on every format's bytes without panicking.
		for g := JPEG; g <= TIFF; g++ {
			ImageDimensions(g, data)
		}
		if code == uint8(FormatUnknown) && len(data) >= 16 {
			gw, gh := ImageDimensions(sniffFormat(data), data)
			if gw != w || gh != h {
				t.Fatal(fmt.Sprintf("unknown: %dx%d, sniffed %dx%d", w, h, gw, gh))
			}
		}
	})
}
