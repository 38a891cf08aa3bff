package tbl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pierrec/lz4/v4"
)

func TestFormatFromName(t *testing.T) {
	for _, c := range []struct {
		name string
		want Format
	}{
		{"a.jpg", JPEG}, {"a.JPEG", JPEG}, {"x/y.Jpeg", JPEG}, {"a.png", PNG},
		{"a.webp", WEBP}, {"a.BMP", BMP}, {"a.tif", TIFF}, {"a.tiff", TIFF},
		{"clip.mp4", MP4}, {"clip.AVI", AVI},
		{"a.raw", FormatUnknown}, {"a.txt", FormatUnknown}, {"noext", FormatUnknown},
		{"a.tar.gz", FormatUnknown}, {"a.gz.jpg", JPEG}, {"a.jpg.txt", FormatUnknown},
		{"weird.jpg/b", FormatUnknown}, {".jpg", JPEG}, {"a.", FormatUnknown}, {"", FormatUnknown},
		{"a.jpg0000644", FormatUnknown}, // TurboLoader's v2 tool on a 100-byte name field
	} {
		if got := FormatFromName(c.name); got != c.want {
			t.Errorf("FormatFromName(%q) = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFormatExtString(t *testing.T) {
	want := []struct{ ext, str string }{
		{"bin", "UNKNOWN"}, {"jpg", "JPEG"}, {"png", "PNG"}, {"webp", "WEBP"}, {"bmp", "BMP"},
		{"tiff", "TIFF"}, {"mp4", "MP4"}, {"avi", "AVI"}, {"raw", "RAW_U8"}, {"bin", "Format(9)"},
	}
	for f, w := range want {
		if got := Format(f).Ext(); got != w.ext {
			t.Errorf("Format(%d).Ext() = %q, want %q", f, got, w.ext)
		}
		if got := Format(f).String(); got != w.str {
			t.Errorf("Format(%d).String() = %q, want %q", f, got, w.str)
		}
	}
	if MP4 != 6 || AVI != 7 || RAWU8 != 8 || TIFF != 5 {
		t.Fatal("format codes moved")
	}
}

// crc16Bitwise is the textbook bit-at-a-time CRC-16/MODBUS.
func crc16Bitwise(p []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range p {
		crc ^= uint16(b)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xA001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

func TestCRC16(t *testing.T) {
	if got := CRC16([]byte("123456789")); got != 0x4B37 { // the catalogue's check value
		t.Errorf("CRC16(123456789) = %#04x, want 0x4b37", got)
	}
	if got := CRC16(nil); got != 0xFFFF {
		t.Errorf("CRC16(empty) = %#04x, want 0xffff", got)
	}
	p := testPayload(1, 5000)
	for n := range 100 {
		if got, want := CRC16(p[:n]), crc16Bitwise(p[:n]); got != want {
			t.Fatalf("%d bytes: %#04x, want %#04x", n, got, want)
		}
	}
	// Split anywhere, the running CRC is the same.
	whole := CRC16(p)
	for _, k := range []int{1, 7, 8, 9, 4095} {
		if got := crc16Update(CRC16(p[:k]), p[k:]); got != whole {
			t.Errorf("split at %d: %#04x, want %#04x", k, got, whole)
		}
	}
	if whole != crc16Bitwise(p) {
		t.Error("5000 bytes: slicing and bitwise differ")
	}
	// Folded runs (long ones, where the processor has carry-less
	// multiplies) agree with the tables at every length, alignment and
	// starting state.
	long := testPayload(2, 1<<16)
	for _, n := range []int{255, 256, 257, 319, 320, 321, 1000, 4096, 4097, 65000} {
		for _, off := range []int{0, 1, 7, 15} {
			for _, init := range []uint16{0, 0xFFFF, 0x1234} {
				q := long[off : off+n]
				if got, want := crc16Update(init, q), crc16Table(init, q); got != want {
					t.Fatalf("%d bytes at %d from %#04x: %#04x, tables say %#04x", n, off, init, got, want)
				}
			}
		}
	}
}

func TestNameMeta(t *testing.T) {
	for _, c := range []struct{ name, json string }{
		{"a.jpg", `{"name":"a.jpg"}`},
		{"dir/a&b <c>.jpg", `{"name":"dir/a&b <c>.jpg"}`},
		{`q"uote\`, `{"name":"q\"uote\\"}`},
		{"", `{"name":""}`},
		{"é.png", `{"name":"é.png"}`},
		{"x\xff.jpg", "{\"name\":\"x\uFFFD.jpg\",\"name_base64\":\"eP8uanBn\"}"},
	} {
		m := NameMeta(c.name)
		if m.Type != MetaJSON || string(m.Data) != c.json {
			t.Errorf("NameMeta(%q) = %d %s, want 1 %s", c.name, m.Type, m.Data, c.json)
		}
		got, ok := SampleName([]MetaEntry{{Type: MetaCustom, Data: []byte(`{"name":"no"}`)}, m})
		if !ok || got != c.name {
			t.Errorf("SampleName(NameMeta(%q)) = %q, %v", c.name, got, ok)
		}
	}
	for _, c := range []struct {
		data  string
		name  string
		ok    bool
		other string
	}{
		{`{"name":"a","label":3,"tags":["x"]}`, "a", true, `label=3 tags=["x"]`},
		{`{"name":null}`, "", false, ""},
		{`{"name":5}`, "", false, ""},
		{`{"label":1}`, "", false, ""},
		{`not json`, "", false, ""},
		{`["name"]`, "", false, ""},
		{`{"name":"a","name_base64":"!!"}`, "a", true, `name_base64="!!"`},
	} {
		name, other, ok := NameFields([]MetaEntry{{Type: MetaJSON, Data: []byte(c.data)}})
		var parts []string
		for _, k := range sortedKeys(other) {
			parts = append(parts, k+"="+string(other[k]))
		}
		if name != c.name || ok != c.ok || strings.Join(parts, " ") != c.other {
			t.Errorf("NameFields(%s) = %q %v %v, want %q %v %s", c.data, name, parts, ok, c.name, c.ok, c.other)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	for i := range ks { // tiny maps: insertion sort
		for j := i; j > 0 && ks[j] < ks[j-1]; j-- {
			ks[j], ks[j-1] = ks[j-1], ks[j]
		}
	}
	return ks
}

type testSample struct {
	format Format
	w, h   uint16
	data   []byte
	meta   []MetaEntry
}

// roundTripSamples: empty, one byte, incompressible, compressible, with and
// without metadata.
func roundTripSamples(withMeta bool) []testSample {
	ss := []testSample{
		{format: JPEG, w: 640, h: 480, data: randomBytes(9, 5000)},
		{format: PNG, data: nil},
		{format: BMP, w: 1, h: 1, data: []byte{42}},
		{format: FormatUnknown, data: make([]byte, 10000)},
		{format: TIFF, w: 3, h: 2, data: testPayload(3, 20000)},
		{format: WEBP, data: randomBytes(10, 70000)},
	}
	if withMeta {
		ss[0].meta = []MetaEntry{NameMeta("a/0001.jpg")}
		ss[3].meta = []MetaEntry{NameMeta("zeros.bin"), {Type: MetaCustom, Data: []byte{1, 2, 3}}, {Type: MetaMsgpack}}
		ss[5].meta = []MetaEntry{NameMeta("x\xfe.webp")}
		ss = append(ss, testSample{format: MP4, data: []byte("ftypisom"), meta: []MetaEntry{NameMeta("clip.mp4")}})
	}
	return ss
}

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	x := seed*0x9E3779B97F4A7C15 + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

func writeFile(t testing.TB, path string, opts WriterOptions, ss []testSample) {
	t.Helper()
	opts.NumSamples = len(ss)
	w, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ss {
		if err := w.AddImage(s.format, s.w, s.h, bytes.NewReader(s.data), int64(len(s.data)), s.meta); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRoundTrip writes samples with each version and option and reads them
// back through the Reader, and decodes the file by hand, independently of
// the package, to check the layout.
func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		opts WriterOptions
		meta bool
	}{
		{"v1", WriterOptions{Version: 1}, false},
		{"v2raw", WriterOptions{Version: 2}, false},
		{"v2lz4", WriterOptions{Version: 2, LZ4: true}, false},
		{"v2raw-meta", WriterOptions{Version: 2}, true},
		{"v2lz4-meta", WriterOptions{Version: 2, LZ4: true}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ss := roundTripSamples(c.meta)
			path := filepath.Join(dir, c.name+".tbl")
			writeFile(t, path, c.opts, ss)
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			handParse(t, raw, c.opts, ss)

			r, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Version() != c.opts.Version || r.Len() != len(ss) {
				t.Fatalf("version %d, %d samples", r.Version(), r.Len())
			}
			for i, want := range ss {
				s := r.Sample(i)
				if s.Index != i || s.Format != want.format || s.Size != uint32(len(want.data)) {
					t.Errorf("sample %d: %+v", i, s)
				}
				if c.opts.Version == 2 && (s.Width != want.w || s.Height != want.h || s.CRC16 != crc16Bitwise(want.data)) {
					t.Errorf("sample %d: %dx%d crc %#04x, want %dx%d %#04x", i, s.Width, s.Height, s.CRC16, want.w, want.h, crc16Bitwise(want.data))
				}
				if len(want.data) == 0 && c.opts.Version == 2 && s.CRC16 != 0xFFFF {
					t.Errorf("empty sample: CRC16 %#04x, want 0xffff", s.CRC16)
				}
				got, err := r.ReadSample(i, nil)
				if err != nil || !bytes.Equal(got, want.data) {
					t.Errorf("sample %d: ReadSample: %d bytes, %v", i, len(got), err)
				}
				sr, err := r.OpenSample(i)
				if err != nil {
					t.Fatal(err)
				}
				if got, err := io.ReadAll(sr); err != nil || !bytes.Equal(got, want.data) {
					t.Errorf("sample %d: OpenSample: %d bytes, %v", i, len(got), err)
				}
				meta, err := r.Metadata(i)
				if err != nil || len(meta) != len(want.meta) {
					t.Fatalf("sample %d: metadata %v, %v", i, meta, err)
				}
				for k := range meta {
					if meta[k].Type != want.meta[k].Type || !bytes.Equal(meta[k].Data, want.meta[k].Data) {
						t.Errorf("sample %d: metadata %d: %d %q, want %d %q", i, k, meta[k].Type, meta[k].Data, want.meta[k].Type, want.meta[k].Data)
					}
				}
				if want.meta != nil {
					name, ok := SampleName(meta)
					wantName, _ := SampleName(want.meta)
					if !ok || name != wantName {
						t.Errorf("sample %d: name %q %v, want %q", i, name, ok, wantName)
					}
				}
			}
			if err := r.Verify(); err != nil {
				t.Error(err)
			}
			// With LZ4, the zeros and the partly repetitive sample shrink;
			// random bytes, one byte and nothing do not.
			var compressed []int
			for i := range r.Len() {
				if r.Sample(i).Compressed {
					compressed = append(compressed, i)
				}
			}
			want := "[]"
			if c.opts.LZ4 {
				want = "[3 4]"
			}
			if fmt.Sprint(compressed) != want {
				t.Errorf("compressed samples %v, want %s", compressed, want)
			}
		})
	}
}

// handParse decodes a file with encoding/binary alone and checks it is the
// layout ss must give: header, back-to-back data in order, entries, the
// CRCs and the metadata section.
func handParse(t *testing.T, b []byte, opts WriterOptions, ss []testSample) {
	t.Helper()
	le := binary.LittleEndian
	hl, el := 32, 16
	if opts.Version == 2 {
		hl, el = 64, 24
	}
	if string(b[:3]) != "TBL" || b[3] != byte(opts.Version) || le.Uint32(b[4:]) != uint32(opts.Version) {
		t.Fatalf("magic/version % x", b[:8])
	}
	if n := le.Uint64(b[8:]); n != uint64(len(ss)) {
		t.Fatalf("num_samples %d", n)
	}
	dataStart := hl + el*len(ss)
	if hs := le.Uint32(b[16:]); hs != uint32(dataStart) {
		t.Fatalf("header_size %d, want %d", hs, dataStart)
	}
	var hasMeta bool
	for _, s := range ss {
		hasMeta = hasMeta || len(s.meta) > 0
	}
	if opts.Version == 1 {
		if !bytes.Equal(b[20:32], make([]byte, 12)) {
			t.Errorf("v1 reserved % x", b[20:32])
		}
	} else {
		flags := uint32(4)
		if opts.LZ4 {
			flags |= 1
		}
		if hasMeta {
			flags |= 2
		}
		if got := le.Uint32(b[40:]); got != flags {
			t.Errorf("header flags %#x, want %#x", got, flags)
		}
		h := bytes.Clone(b[:64])
		copy(h[44:48], []byte{0, 0, 0, 0})
		if got, want := le.Uint32(b[44:]), crc32.ChecksumIEEE(h); got != want {
			t.Errorf("header crc %#08x, want %#08x", got, want)
		}
		if !bytes.Equal(b[20:24], make([]byte, 4)) || !bytes.Equal(b[48:64], make([]byte, 16)) {
			t.Errorf("v2 padding/reserved % x % x", b[20:24], b[48:64])
		}
	}
	off := dataStart
	for i, s := range ss {
		e := b[hl+i*el : hl+(i+1)*el]
		if got := le.Uint64(e); got != uint64(off) {
			t.Fatalf("sample %d: offset %d, want %d", i, got, off)
		}
		stored := int(le.Uint32(e[8:]))
		data := b[off : off+stored]
		if opts.Version == 1 {
			if e[12] != byte(s.format) || !bytes.Equal(e[13:16], []byte{0, 0, 0}) || !bytes.Equal(data, s.data) {
				t.Errorf("sample %d: entry % x", i, e)
			}
			off += stored
			continue
		}
		usize, flags := le.Uint32(e[12:]), e[21]
		if usize != uint32(len(s.data)) || le.Uint16(e[16:]) != s.w || le.Uint16(e[18:]) != s.h || e[20] != byte(s.format) {
			t.Errorf("sample %d: entry % x", i, e)
		}
		if got := le.Uint16(e[22:]); got != crc16Bitwise(s.data) {
			t.Errorf("sample %d: crc16 %#04x", i, got)
		}
		// Compressed exactly when LZ4 is on and the block is smaller.
		var c lz4.CompressorCCompat
		cb := make([]byte, lz4.CompressBlockBound(len(s.data)))
		k, _ := c.CompressBlock(s.data, cb)
		wantComp := opts.LZ4 && len(s.data) > 0 && k < len(s.data)
		if got := flags&1 != 0; got != wantComp {
			t.Errorf("sample %d: compressed %v, want %v", i, got, wantComp)
		}
		if wantMeta := len(s.meta) > 0; (flags&2 != 0) != wantMeta || flags&^3 != 0 {
			t.Errorf("sample %d: flags %#02x", i, flags)
		}
		if wantComp {
			dec := make([]byte, usize)
			if n, err := lz4.UncompressBlock(data, dec); err != nil || n != int(usize) || !bytes.Equal(dec, s.data) {
				t.Errorf("sample %d: LZ4 block decodes to %d bytes, %v", i, n, err)
			}
		} else if !bytes.Equal(data, s.data) {
			t.Errorf("sample %d: stored bytes differ", i)
		}
		off += stored
	}
	if opts.Version == 1 {
		if off != len(b) {
			t.Errorf("file is %d bytes, data ends at %d", len(b), off)
		}
		return
	}
	mo, ms := le.Uint64(b[24:]), le.Uint64(b[32:])
	if !hasMeta {
		if mo != 0 || ms != 0 || off != len(b) {
			t.Errorf("metadata %d+%d, data ends at %d of %d", mo, ms, off, len(b))
		}
		return
	}
	if mo != uint64(off) || mo+ms != uint64(len(b)) {
		t.Fatalf("metadata section %d+%d, data ends at %d of %d", mo, ms, off, len(b))
	}
	p := b[mo:]
	for i, s := range ss {
		for _, m := range s.meta {
			if le.Uint64(p) != uint64(i) || le.Uint32(p[8:]) != uint32(len(m.Data)) || le.Uint16(p[12:]) != m.Type || le.Uint16(p[14:]) != 0 {
				t.Fatalf("metadata block for sample %d: % x", i, p[:16])
			}
			if !bytes.Equal(p[16:16+len(m.Data)], m.Data) {
				t.Fatalf("metadata block for sample %d: data %q", i, p[16:16+len(m.Data)])
			}
			p = p[16+len(m.Data):]
		}
	}
	if len(p) != 0 {
		t.Errorf("%d bytes left in the metadata section", len(p))
	}
}

// TestMetaSpill: metadata past SpoolMemory goes through a temporary file
// and the output is the same.
func TestMetaSpill(t *testing.T) {
	dir := t.TempDir()
	ss := roundTripSamples(true)
	for i := range ss {
		ss[i].meta = append(ss[i].meta, MetaEntry{Type: MetaJSON, Data: []byte(strings.Repeat("x", 100*i))})
	}
	writeFile(t, filepath.Join(dir, "mem.tbl"), WriterOptions{Version: 2, LZ4: true}, ss)
	writeFile(t, filepath.Join(dir, "spill.tbl"), WriterOptions{Version: 2, LZ4: true, SpoolMemory: 200}, ss)
	a, _ := os.ReadFile(filepath.Join(dir, "mem.tbl"))
	b, _ := os.ReadFile(filepath.Join(dir, "spill.tbl"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("spilled output differs (%d and %d bytes)", len(a), len(b))
	}
	assertOnly(t, dir, "mem.tbl", "spill.tbl")
}

// assertOnly checks dir holds exactly names: no temporary file left.
func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	if strings.Join(got, " ") != strings.Join(names, " ") {
		t.Errorf("directory holds %v, want %v", got, names)
	}
}

// failReader fails the test if read: a refused sample must be refused
// before its bytes are consumed.
type failReader struct{ t *testing.T }

func (f failReader) Read([]byte) (int, error) {
	f.t.Error("data read")
	return 0, io.EOF
}

func TestWriterErrors(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.tbl")
	if err := os.WriteFile(target, []byte("earlier"), 0o644); err != nil {
		t.Fatal(err)
	}
	one := func(b string) (io.Reader, int64) { return strings.NewReader(b), int64(len(b)) }
	for _, c := range []struct {
		name   string
		opts   WriterOptions
		create bool // the error comes from Create
		add    func(w *Writer) error
		want   error // errors.Is, or nil for any error
		msg    string
	}{
		{name: "version 0", opts: WriterOptions{}, create: true, msg: "version 0"},
		{name: "version 3", opts: WriterOptions{Version: 3}, create: true, msg: "version 3"},
		{name: "v1 LZ4", opts: WriterOptions{Version: 1, LZ4: true}, create: true, want: ErrUnrepresentable},
		{name: "v1 too many", opts: WriterOptions{Version: 1, NumSamples: MaxSamplesV1 + 1}, create: true, want: ErrUnrepresentable, msg: "at most 268435453"},
		{name: "v2 too many", opts: WriterOptions{Version: 2, NumSamples: MaxSamplesV2 + 1}, create: true, want: ErrUnrepresentable, msg: "at most 178956967"},
		{name: "negative", opts: WriterOptions{Version: 2, NumSamples: -1}, create: true},
		{name: "too few", opts: WriterOptions{Version: 2, NumSamples: 2}, add: func(w *Writer) error {
			d, n := one("abc")
			return w.Add(JPEG, d, n, nil)
		}, msg: "closed after 1 samples, 2 were announced"},
		{name: "too many", opts: WriterOptions{Version: 2, NumSamples: 1}, add: func(w *Writer) error {
			d, n := one("abc")
			w.Add(JPEG, d, n, nil)
			return w.Add(JPEG, d, n, nil)
		}, msg: "sample 1: more samples than announced (1)"},
		{name: "4 GiB", opts: WriterOptions{Version: 2, NumSamples: 1}, add: func(w *Writer) error {
			return w.Add(MP4, failReader{t}, 1<<32, nil)
		}, want: ErrUnrepresentable, msg: "sample 0: 4294967296 bytes"},
		{name: "4 GiB v1", opts: WriterOptions{Version: 1, NumSamples: 1}, add: func(w *Writer) error {
			return w.Add(JPEG, failReader{t}, 1<<32+5, nil)
		}, want: ErrUnrepresentable},
		{name: "v1 metadata", opts: WriterOptions{Version: 1, NumSamples: 1}, add: func(w *Writer) error {
			d, n := one("abc")
			return w.Add(JPEG, d, n, []MetaEntry{NameMeta("a.jpg")})
		}, want: ErrUnrepresentable, msg: "version 1 has no metadata"},
		{name: "v1 mp4", opts: WriterOptions{Version: 1, NumSamples: 1}, add: func(w *Writer) error {
			d, n := one("abc")
			return w.Add(MP4, d, n, nil)
		}, want: ErrUnrepresentable, msg: "format MP4"},
		{name: "short data", opts: WriterOptions{Version: 2, NumSamples: 1}, add: func(w *Writer) error {
			return w.Add(JPEG, strings.NewReader("abc"), 10, nil)
		}, want: io.ErrUnexpectedEOF, msg: "data ended after 3 of 10 bytes"},
		{name: "short data lz4", opts: WriterOptions{Version: 2, LZ4: true, NumSamples: 1}, add: func(w *Writer) error {
			return w.Add(JPEG, strings.NewReader("abc"), 10, nil)
		}, want: io.ErrUnexpectedEOF, msg: "data ended after 3 of 10 bytes"},
		{name: "negative size", opts: WriterOptions{Version: 2, NumSamples: 1}, add: func(w *Writer) error {
			return w.Add(JPEG, failReader{t}, -1, nil)
		}, msg: "size -1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w, err := Create(target, c.opts)
			if c.create {
				if err == nil {
					w.Abort()
					t.Fatal("Create succeeded")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				err = c.add(w)
				if cerr := w.Close(); err == nil {
					err = cerr
				} else if cerr == nil {
					t.Error("Close succeeded after an error")
				}
				if err == nil {
					t.Fatal("no error")
				}
				if again := w.Add(JPEG, strings.NewReader(""), 0, nil); again == nil {
					t.Error("Add after Close succeeded")
				}
			}
			if c.want != nil && !errors.Is(err, c.want) {
				t.Errorf("error %v is not %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q does not say %q", err, c.msg)
			}
			if got, _ := os.ReadFile(target); string(got) != "earlier" {
				t.Errorf("target now holds %q", got)
			}
			assertOnly(t, dir, "out.tbl")
		})
	}
}

func TestWriterAbort(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(filepath.Join(dir, "a.tbl"), WriterOptions{Version: 2, NumSamples: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(PNG, strings.NewReader("x"), 1, nil); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	assertOnly(t, dir)

	// Abort after a successful Close leaves the file.
	w, err = Create(filepath.Join(dir, "b.tbl"), WriterOptions{Version: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	assertOnly(t, dir, "b.tbl")
}

// TestConcurrentReads: a Reader serves several goroutines at once (run
// with -race).
func TestConcurrentReads(t *testing.T) {
	ss := roundTripSamples(true)
	path := filepath.Join(t.TempDir(), "c.tbl")
	writeFile(t, path, WriterOptions{Version: 2, LZ4: true}, ss)
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	errs := make(chan error, 4)
	for g := range 4 {
		go func() {
			var buf []byte
			for k := range 50 {
				i := (g + k) % len(ss)
				var err error
				if buf, err = r.ReadSample(i, buf); err != nil {
					errs <- err
					return
				}
				if !bytes.Equal(buf, ss[i].data) {
					errs <- fmt.Errorf("goroutine %d: sample %d differs", g, i)
					return
				}
				if _, err := r.Metadata(i); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
