package tbl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// The corruption tests start from small files of known layout:
//
// v2 (LZ4, metadata): header 64 B; entries at 64, 88, 112, 136;
// header_size 160. Sample 0: 4000 zero bytes, an LZ4 block of 26 bytes at
// 160. Sample 1: 300 random bytes at 186. Sample 2: empty, at 486. Sample
// 3: 50 random bytes at 486, with a name. Metadata section at 536: one
// 16-byte block header and 17 bytes of JSON; 569 bytes in all.
//
// v2nometa: the same without the name: 536 bytes.
//
// v1: header 32 B; entries at 32, 48, 64; header_size 80. Sample 0: 100
// bytes at 80; sample 1: empty at 180; sample 2: 60 bytes at 180; 240
// bytes in all.
var baseSamples = map[string]struct {
	opts WriterOptions
	ss   []testSample
}{
	"v2": {WriterOptions{Version: 2, LZ4: true}, []testSample{
		{data: make([]byte, 4000)},
		{format: PNG, w: 10, h: 20, data: randomBytes(1, 300)},
		{format: JPEG},
		{format: JPEG, data: randomBytes(2, 50), meta: []MetaEntry{NameMeta("s3.jpg")}},
	}},
	"v2nometa": {WriterOptions{Version: 2, LZ4: true}, []testSample{
		{data: make([]byte, 4000)},
		{format: PNG, w: 10, h: 20, data: randomBytes(1, 300)},
		{format: JPEG},
		{format: JPEG, data: randomBytes(2, 50)},
	}},
	"v1": {WriterOptions{Version: 1}, []testSample{
		{format: JPEG, data: randomBytes(3, 100)},
		{format: JPEG},
		{format: PNG, data: randomBytes(4, 60)},
	}},
}

func baseFiles(t testing.TB) map[string][]byte {
	t.Helper()
	dir := t.TempDir()
	out := make(map[string][]byte)
	for name, b := range baseSamples {
		p := filepath.Join(dir, name+".tbl")
		writeFile(t, p, b.opts, b.ss)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	for name, size := range map[string]int{"v2": 569, "v2nometa": 536, "v1": 240} {
		if len(out[name]) != size {
			t.Fatalf("%s base file is %d bytes, the tests assume %d", name, len(out[name]), size)
		}
	}
	return out
}

var tle = binary.LittleEndian

func set16(off int, v uint16) func([]byte) []byte {
	return func(b []byte) []byte { tle.PutUint16(b[off:], v); return b }
}
func set32(off int, v uint32) func([]byte) []byte {
	return func(b []byte) []byte { tle.PutUint32(b[off:], v); return b }
}
func set64(off int, v uint64) func([]byte) []byte {
	return func(b []byte) []byte { tle.PutUint64(b[off:], v); return b }
}
func setByte(off int, v byte) func([]byte) []byte {
	return func(b []byte) []byte { b[off] = v; return b }
}
func xorByte(off int, v byte) func([]byte) []byte {
	return func(b []byte) []byte { b[off] ^= v; return b }
}
func cut(n int) func([]byte) []byte { return func(b []byte) []byte { return b[:n] } }
func all(fs ...func([]byte) []byte) func([]byte) []byte {
	return func(b []byte) []byte {
		for _, f := range fs {
			b = f(b)
		}
		return b
	}
}

// fixCRC recomputes a v2 header's CRC-32 after a mutation, so that the
// check under test is reached.
func fixCRC(b []byte) []byte {
	if len(b) >= 64 {
		h := bytes.Clone(b[:64])
		tle.PutUint32(h[44:], 0)
		tle.PutUint32(b[44:], crc32.ChecksumIEEE(h))
	}
	return b
}

func TestCorrupt(t *testing.T) {
	base := baseFiles(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name   string
		base   string
		mutate func([]byte) []byte
		fix    bool  // recompute the header CRC after mutating
		read   int   // -1: Open fails; else Open succeeds and reading this sample fails
		err    error // sentinel
		sample int
		offset int64
	}{
		{"empty file", "v2", cut(0), false, -1, ErrFormat, -1, 0},
		{"truncated in magic", "v2", cut(2), false, -1, ErrTruncated, -1, 2},
		{"truncated v2 header", "v2", cut(40), false, -1, ErrTruncated, -1, 40},
		{"truncated v1 header", "v1", cut(31), false, -1, ErrTruncated, -1, 31},
		{"truncated index", "v2", cut(100), false, -1, ErrTruncated, -1, 100},
		{"truncated v1 data", "v1", cut(239), false, -1, ErrTruncated, 2, 64},
		{"truncated v2 data", "v2nometa", cut(500), false, -1, ErrTruncated, 3, 136},
		{"truncated metadata", "v2", cut(560), false, -1, ErrTruncated, -1, 560},
		{"bad magic", "v2", setByte(0, 'X'), false, -1, ErrFormat, -1, 0},
		{"not TBL at all", "v1", set32(0, 0x04034b50), false, -1, ErrFormat, -1, 0},
		{"bad magic version", "v2", setByte(3, 3), false, -1, ErrVersion, -1, 3},
		{"version field", "v2", set32(4, 3), true, -1, ErrVersion, -1, 4},
		{"v1 version field", "v1", set32(4, 2), false, -1, ErrVersion, -1, 4},
		{"header CRC-32", "v2", xorByte(44, 1), false, -1, ErrChecksum, -1, 44},
		{"header byte without CRC fix", "v2", xorByte(17, 1), false, -1, ErrChecksum, -1, 44},
		{"header_size wrong", "v2", set32(16, 184), true, -1, ErrCorrupt, -1, 16},
		{"v1 header_size wrong", "v1", set32(16, 64), false, -1, ErrCorrupt, -1, 16},
		{"num_samples huge", "v2", set64(8, 1<<40), true, -1, ErrCorrupt, -1, 8},
		{"num_samples more", "v1", set64(8, 4), false, -1, ErrCorrupt, -1, 16},
		{"v1 reserved header", "v1", setByte(25, 1), false, -1, ErrCorrupt, -1, 25},
		{"v2 padding", "v2", setByte(21, 1), true, -1, ErrCorrupt, -1, 21},
		{"v2 reserved header", "v2", setByte(63, 0x80), true, -1, ErrCorrupt, -1, 63},
		{"unknown header flag", "v2", set32(40, 7|8), true, -1, ErrCorrupt, -1, 40},
		{"v1 reserved entry", "v1", setByte(48+14, 1), false, -1, ErrCorrupt, 1, 62},
		{"offset inside index", "v2", set64(88, 100), false, -1, ErrCorrupt, 1, 88},
		{"v1 offset inside header", "v1", set64(32, 0), false, -1, ErrCorrupt, 0, 32},
		{"offset past end", "v1", set64(48, 1<<40), false, -1, ErrTruncated, 1, 48},
		{"offset overflow", "v1", set64(64, 1<<64-10), false, -1, ErrTruncated, 2, 64},
		{"size past end", "v1", set32(64+8, 61), false, -1, ErrTruncated, 2, 64},
		{"data into metadata", "v2", all(set32(136+8, 51), set32(136+12, 51)), false, -1, ErrCorrupt, 3, 136},
		{"overlap", "v2", set64(136, 190), false, -1, ErrCorrupt, 3, 136},
		{"overlap out of order", "v1", all(set64(32, 130), set64(64, 80)), false, -1, ErrCorrupt, 2, 64},
		{"uncompressed_size of raw sample", "v2", set32(88+12, 301), false, -1, ErrCorrupt, 1, 100},
		{"compressed, uncompressed_size 0", "v2", set32(64+12, 0), false, -1, ErrCorrupt, 0, 72},
		{"compressed, uncompressed_size beyond LZ4", "v2", set32(64+12, 255*26+256), false, -1, ErrCorrupt, 0, 76},
		{"unknown sample flag", "v2", setByte(88+21, 8), false, -1, ErrCorrupt, 1, 109},
		{"compressed without header flag", "v2", set32(40, 4|2), true, -1, ErrCorrupt, 0, 85},
		{"sample metadata flag, no section", "v2", all(set32(40, 5), set64(24, 0), set64(32, 0)), true, -1, ErrCorrupt, 3, 157},
		{"section without flag", "v2", set32(40, 5), true, -1, ErrCorrupt, -1, 24},
		{"metadata_offset inside index", "v2", set64(24, 100), true, -1, ErrCorrupt, -1, 24},
		{"metadata section too small", "v2", set64(32, 8), true, -1, ErrCorrupt, -1, 32},
		{"metadata past end", "v2", set64(32, 34), true, -1, ErrTruncated, -1, 569},
		{"metadata block sample out of range", "v2", set64(536, 4), false, -1, ErrCorrupt, -1, 536},
		{"metadata block reserved", "v2", set16(536+14, 1), false, -1, ErrCorrupt, 3, 550},
		{"metadata block too long", "v2", set32(536+8, 18), false, -1, ErrCorrupt, 3, 544},
		{"metadata block for sample without flag", "v2", set64(536, 1), false, -1, ErrCorrupt, 1, 536},
		{"metadata flag without block", "v2", setByte(88+21, 2), false, -1, ErrCorrupt, 1, 109},
		{"metadata section cut inside a block header", "v2", all(set64(32, 33+8), func(b []byte) []byte { return append(b, make([]byte, 8)...) }), true, -1, ErrCorrupt, -1, 569},
		{"CRC-16 of raw sample", "v2", xorByte(88+22, 1), false, 1, ErrChecksum, 1, 186},
		{"raw sample byte flipped", "v2", xorByte(300, 0x10), false, 1, ErrChecksum, 1, 186},
		{"CRC-16 of compressed sample", "v2", xorByte(64+23, 0x80), false, 0, ErrChecksum, 0, 160},
		{"CRC-16 of empty sample", "v2", set16(112+22, 0), false, 2, ErrChecksum, 2, 486},
		{"LZ4 garbage", "v2", func(b []byte) []byte { copy(b[160:186], bytes.Repeat([]byte{0xFF}, 26)); return b }, false, 0, ErrCorrupt, 0, 160},
		{"LZ4 decodes short", "v2", set32(64+12, 4001), false, 0, ErrCorrupt, 0, 160},
		{"LZ4 decodes long", "v2", set32(64+12, 3999), false, 0, ErrCorrupt, 0, 160},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := c.mutate(bytes.Clone(base[c.base]))
			if c.fix {
				b = fixCRC(b)
			}
			path := filepath.Join(dir, "f.tbl")
			if err := os.WriteFile(path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			r, err := Open(path)
			if c.read >= 0 {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				defer r.Close()
				_, err = r.ReadSample(c.read, nil)
				checkErr(t, "ReadSample", err, path, c.err, c.sample, c.offset)
				err = r.Verify()
				checkErr(t, "Verify", err, path, c.err, c.sample, c.offset)
				if sr, oerr := r.OpenSample(c.read); oerr != nil {
					err = oerr
				} else {
					_, err = io.ReadAll(sr)
				}
				checkErr(t, "OpenSample", err, path, c.err, c.sample, c.offset)
				return
			}
			if err == nil {
				r.Close()
				t.Fatal("Open succeeded")
			}
			checkErr(t, "Open", err, path, c.err, c.sample, c.offset)
		})
	}
}

func checkErr(t *testing.T, op string, err error, path string, want error, sample int, offset int64) {
	t.Helper()
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: error %v (%T), want an *Error", op, err, err)
	}
	if !errors.Is(err, want) || e.Sample != sample || e.Offset != offset || e.Path != path {
		t.Errorf("%s: %v\n  got %v sample %d offset %d, want %v sample %d offset %d", op, err, e.Err, e.Sample, e.Offset, want, sample, offset)
	}
}

// TestOutOfOrder: an index not in file order, without overlap, is valid.
func TestOutOfOrder(t *testing.T) {
	b := bytes.Clone(baseFiles(t)["v1"])
	e0, e2 := bytes.Clone(b[32:48]), bytes.Clone(b[64:80])
	copy(b[32:], e2)
	copy(b[64:], e0)
	r, err := newReader("swapped", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	ss := baseSamples["v1"].ss
	for i, want := range [][]byte{ss[2].data, nil, ss[0].data} {
		got, err := r.ReadSample(i, nil)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("sample %d: %d bytes, %v", i, len(got), err)
		}
	}
	if r.Sample(0).Offset != 180 || r.Sample(2).Offset != 80 || r.Sample(0).Format != PNG {
		t.Errorf("samples %+v %+v", r.Sample(0), r.Sample(2))
	}
}

// TestReaderUse: bounds, dst reuse, a file without checksums, Close.
func TestReaderUse(t *testing.T) {
	base := baseFiles(t)
	path := filepath.Join(t.TempDir(), "v2.tbl")
	os.WriteFile(path, base["v2"], 0o644)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.ReadSample(4, nil); err == nil {
		t.Error("ReadSample(4) of 4 succeeded")
	}
	if _, err := r.Metadata(-1); err == nil {
		t.Error("Metadata(-1) succeeded")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("Sample(4) did not panic")
			}
		}()
		r.Sample(4)
	}()
	dst := make([]byte, 0, 5000)
	got, err := r.ReadSample(0, dst)
	if err != nil || len(got) != 4000 || &got[0] != &dst[:1][0] {
		t.Errorf("ReadSample into a large dst: %d bytes, %v, reused %v", len(got), err, len(got) > 0 && &got[0] == &dst[:1][0])
	}
	m, err := r.Metadata(3)
	if name, ok := SampleName(m); err != nil || !ok || name != "s3.jpg" {
		t.Errorf("sample 3: name %q %v %v", name, ok, err)
	}
	if err := r.Close(); err != nil {
		t.Error(err)
	}
	if _, err := r.ReadSample(1, nil); err == nil {
		t.Error("ReadSample after Close succeeded")
	}

	// A file that shrinks after Open: reads report the truncation.
	path2 := filepath.Join(t.TempDir(), "shrinks.tbl")
	os.WriteFile(path2, base["v2nometa"], 0o644)
	r3, err := Open(path2)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Close()
	if err := os.Truncate(path2, 300); err != nil {
		t.Fatal(err)
	}
	_, err = r3.ReadSample(1, nil)
	checkErr(t, "ReadSample", err, path2, ErrTruncated, 1, 300)
	sr, err := r3.OpenSample(1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.ReadAll(sr)
	checkErr(t, "OpenSample", err, path2, ErrTruncated, 1, 300)
	err = r3.Verify()
	checkErr(t, "Verify", err, path2, ErrTruncated, 1, 300)

	// Without FlagHasChecksums, as TurboLoader's reader, the CRC-16 fields
	// are not checked.
	b := fixCRC(set32(40, 1|2)(xorByte(88+22, 1)(bytes.Clone(base["v2"]))))
	r2, err := newReader("nocrc", bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if err := r2.Verify(); err != nil {
		t.Errorf("Verify without checksums: %v", err)
	}
}
