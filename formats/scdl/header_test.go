package scdl

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestConformanceHeaders decodes every header.sch bionemo wrote, compares
// it with header.json (bionemo's own decoding), and encodes it back to the
// same bytes.
func TestConformanceHeaders(t *testing.T) {
	n := 0
	for _, c := range conformanceCases(t) {
		if !c.ok {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(c.dir, "scdl", HeaderFile))
			if err != nil {
				t.Fatal(err)
			}
			h, err := DecodeHeader(b)
			if err != nil {
				t.Fatal(err)
			}
			var j headerJSON
			loadJSON(t, filepath.Join(c.dir, "header.json"), &j)
			if want := j.header(); !reflect.DeepEqual(h, want) {
				t.Errorf("decoded %+v\nheader.json %+v", h, want)
			}
			if h.Major != 0 || h.Minor != 1 || h.Point != 0 {
				t.Errorf("version %d.%d.%d, want 0.1.0", h.Major, h.Minor, h.Point)
			}
			out, err := h.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(out, b) {
				t.Errorf("encode(decode(header.sch)) differs:\n%x\n%x", out, b)
			}
		})
		n++
	}
	if n < 4 {
		t.Fatalf("only %d conformance headers", n)
	}
}

// synthHeader has one array of each shape kind and a feature index, with
// these offsets (see TestDecodeHeaderErrors).
func synthHeader() *Header {
	h := NewHeader()
	h.Arrays = []ArrayInfo{
		{Name: "DATA", Length: 5, DType: Float32},
		{Name: "X", Length: 6, DType: Uint16, Shape: []uint32{2, 3}},
	}
	h.FeatureIndices = []FeatureIndexInfo{{Name: "var_features", Length: 5, DType: StringArray, Files: []string{"a", "b"}}}
	return h
}

// Offsets in synthHeader's encoding.
const (
	offArrayCount = 12
	offA0Name     = 20  // "DATA"
	offA0DType    = 32  // after the u64 length
	offA0HasShape = 36  //
	offA1NameLen  = 37  // array "X"
	offA1Dims     = 55  // u32 dimension count
	offFICount    = 67  //
	offFIDType    = 95  //
	offFIFiles    = 99  // u32 file count
	offFIFile0    = 107 // "a"
	offFIHasShape = 113 //
	synthLen      = 114
)

func TestSynthHeaderLayout(t *testing.T) {
	b, err := synthHeader().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	checks := []struct {
		what      string
		got, want uint64
	}{
		{"length", uint64(len(b)), synthLen},
		{"array count", uint64(be.Uint32(b[offArrayCount:])), 2},
		{"array 0 name", uint64(b[offA0Name]), 'D'},
		{"array 0 dtype", uint64(be.Uint32(b[offA0DType:])), uint64(Float32)},
		{"array 0 has_shape", uint64(b[offA0HasShape]), 0},
		{"array 1 name length", uint64(be.Uint32(b[offA1NameLen:])), 1},
		{"array 1 dims", uint64(be.Uint32(b[offA1Dims:])), 2},
		{"feature index count", uint64(be.Uint32(b[offFICount:])), 1},
		{"feature index dtype", uint64(be.Uint32(b[offFIDType:])), uint64(StringArray)},
		{"file count", uint64(be.Uint32(b[offFIFiles:])), 2},
		{"file 0", uint64(b[offFIFile0]), 'a'},
		{"fi has_shape", uint64(b[offFIHasShape]), 0},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if !bytes.Equal(b[:16], []byte("SCDL\x00\x01\x00\x01\x00\x00\x00\x01\x00\x00\x00\x02")) {
		t.Errorf("core %x", b[:16])
	}
}

func TestDecodeHeaderErrors(t *testing.T) {
	base, err := synthHeader().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(base)) }
	put32 := func(off int, v uint32) []byte {
		return edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[off:], v); return b })
	}
	put8 := func(off int, v byte) []byte {
		return edit(func(b []byte) []byte { b[off] = v; return b })
	}
	cases := []struct {
		name  string
		in    []byte
		kind  error
		off   int64
		words []string
	}{
		{"empty", nil, ErrTruncated, 0, []string{"16-byte core"}},
		{"magic prefix", []byte("SC"), ErrTruncated, 2, nil},
		{"core cut", base[:15], ErrTruncated, 15, nil},
		{"bad magic", put8(3, 'X'), ErrFormat, 0, []string{`"SCDX"`}},
		{"not scdl at all", []byte("PK\x03\x04"), ErrFormat, 0, nil},
		{"short garbage", []byte("x"), ErrFormat, 0, nil},
		{"endianness 0", put8(7, 0), ErrUnsupported, 7, []string{"endianness 0"}},
		{"endianness 2", put8(7, 2), ErrUnsupported, 7, []string{"endianness 2"}},
		{"backend 0", put32(8, 0), ErrUnsupported, 8, []string{"backend 0"}},
		{"backend 2", put32(8, 2), ErrUnsupported, 8, []string{"backend 2"}},
		{"array count too large", put32(offArrayCount, 1<<32-1), ErrTruncated, offArrayCount, []string{"array count 4294967295"}},
		{"array dtype 0", put32(offA0DType, 0), ErrUnsupported, offA0DType, []string{`array "DATA" dtype 0`}},
		{"array dtype 10", put32(offA0DType, 10), ErrUnsupported, offA0DType, []string{"dtype 10"}},
		{"has_shape 2", put8(offA0HasShape, 2), ErrFormat, offA0HasShape, []string{"has_shape is 2"}},
		{"array name not UTF-8", put8(offA0Name, 0xff), ErrFormat, offA0Name, []string{"UTF-8"}},
		{"array name length past the end", put32(offA1NameLen, 1000), ErrTruncated, offA1NameLen + 4, []string{"array 1 name needs 1000 bytes"}},
		{"shape dims past the end", put32(offA1Dims, 100), ErrTruncated, offA1Dims, []string{"shape dimension count 100"}},
		{"feature index dtype 11", put32(offFIDType, 11), ErrUnsupported, offFIDType, []string{"dtype 11"}},
		{"file count too large", put32(offFIFiles, 1<<20), ErrTruncated, offFIFiles, []string{"file count 1048576"}},
		{"file not UTF-8", put8(offFIFile0, 0xc3), ErrFormat, offFIFile0, []string{"file 0"}},
		{"fi has_shape 7", put8(offFIHasShape, 7), ErrFormat, offFIHasShape, []string{"has_shape is 7"}},
		{"no feature index count", base[:offFICount], ErrTruncated, offFICount, []string{"feature index count needs 4 bytes"}},
		{"trailing byte", append(bytes.Clone(base), 0), ErrFormat, synthLen, []string{"1 bytes after"}},
		{"trailing count", append(bytes.Clone(base), 0, 0, 0, 0), ErrFormat, synthLen, []string{"4 bytes after"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, err := DecodeHeader(c.in)
			if h != nil {
				t.Errorf("header returned with the error")
			}
			wantErr(t, err, c.kind, "", c.off, c.words...)
		})
	}
}

// TestDecodeHeaderEveryPrefix: every proper prefix of a valid header is
// refused as truncated, at an offset inside it.
func TestDecodeHeaderEveryPrefix(t *testing.T) {
	base, err := synthHeader().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	for n := range len(base) {
		_, err := DecodeHeader(base[:n])
		wantErr(t, err, ErrTruncated, "", -2)
		if e := err.(*Error); e.Offset > int64(n) {
			t.Errorf("prefix %d: offset %d", n, e.Offset)
		}
	}
	h, err := DecodeHeader(base)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(h, synthHeader()) {
		t.Errorf("decoded %+v", h)
	}
}

// TestDecodeHeaderEmptyShape: has_shape 1 with no dimensions decodes (as
// bionemo does) to an empty, non-nil shape, which MarshalBinary refuses.
func TestDecodeHeaderEmptyShape(t *testing.T) {
	h := NewHeader()
	h.Arrays = []ArrayInfo{{Name: "DATA", Length: 1, DType: Uint8, Shape: []uint32{7}}}
	b, err := h.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// Drop the one dimension: dims count 0.
	b = append(b[:len(b)-4-8], 0, 0, 0, 0, 0, 0, 0, 0)
	got, err := DecodeHeader(b)
	if err != nil {
		t.Fatal(err)
	}
	if s := got.Arrays[0].Shape; s == nil || len(s) != 0 {
		t.Fatalf("shape %#v, want empty and non-nil", s)
	}
	_, err = got.MarshalBinary()
	wantErr(t, err, ErrInvalid, "", -1, "without dimensions")
}

func TestMarshalBinaryErrors(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(h *Header)
		words []string
	}{
		{"major 1", func(h *Header) { h.Major = 1 }, []string{"version 1.1.0"}},
		{"endianness 0", func(h *Header) { h.Endianness = 0 }, []string{"endianness 0"}},
		{"backend 0", func(h *Header) { h.Backend = 0 }, []string{"backend 0"}},
		{"empty array name", func(h *Header) { h.Arrays[0].Name = "" }, []string{"array name"}},
		{"blank array name", func(h *Header) { h.Arrays[0].Name = " \t\x1f" }, []string{"empty or blank"}},
		{"array name not UTF-8", func(h *Header) { h.Arrays[0].Name = "D\xffA" }, []string{"UTF-8"}},
		{"array name too long", func(h *Header) { h.Arrays[0].Name = strings.Repeat("n", 1025) }, []string{"1025 bytes"}},
		{"duplicate array", func(h *Header) { h.Arrays[1].Name = "DATA" }, []string{`"DATA" twice`}},
		{"array dtype 0", func(h *Header) { h.Arrays[0].DType = 0 }, []string{"dtype 0"}},
		{"array dtype 10", func(h *Header) { h.Arrays[1].DType = 10 }, []string{"dtype 10"}},
		{"empty shape", func(h *Header) { h.Arrays[1].Shape = []uint32{} }, []string{"without dimensions"}},
		{"zero dimension", func(h *Header) { h.Arrays[1].Shape = []uint32{2, 0} }, []string{"dimension 1 is 0"}},
		{"blank feature index", func(h *Header) { h.FeatureIndices[0].Name = "  " }, []string{"feature index name"}},
		{"feature index named as array", func(h *Header) { h.FeatureIndices[0].Name = "X" }, []string{"name of an array"}},
		{"duplicate feature index", func(h *Header) {
			h.FeatureIndices = append(h.FeatureIndices, h.FeatureIndices[0])
		}, []string{`"var_features" twice`}},
		{"feature index dtype 0", func(h *Header) { h.FeatureIndices[0].DType = 0 }, []string{"dtype 0"}},
		{"empty file path", func(h *Header) { h.FeatureIndices[0].Files[1] = "" }, []string{"file path 1 is empty"}},
		{"file path not UTF-8", func(h *Header) { h.FeatureIndices[0].Files[0] = "\xc3" }, []string{"UTF-8"}},
		{"feature index zero dimension", func(h *Header) { h.FeatureIndices[0].Shape = []uint32{0} }, []string{"dimension 0 is 0"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := synthHeader()
			c.edit(h)
			b, err := h.MarshalBinary()
			if b != nil {
				t.Errorf("bytes returned with the error")
			}
			wantErr(t, err, ErrInvalid, "", -1, c.words...)
		})
	}
}

func TestDType(t *testing.T) {
	cases := []struct {
		d      DType
		size   int
		name   string
		descr  string
		signed bool
	}{
		{Uint8, 1, "uint8", "|u1", false},
		{Uint16, 2, "uint16", "<u2", false},
		{Uint32, 4, "uint32", "<u4", false},
		{Uint64, 8, "uint64", "<u8", false},
		{Float16, 2, "float16", "<f2", false},
		{Float32, 4, "float32", "<f4", false},
		{Float64, 8, "float64", "<f8", false},
		{StringArray, 0, "string", "", false},
		{FixedStringArray, 0, "fixed_string", "", false},
		{0, 0, "DType(0)", "", false},
		{10, 0, "DType(10)", "", false},
	}
	for _, c := range cases {
		if c.d.ItemSize() != c.size || c.d.String() != c.name || NPYDescr(c.d) != c.descr {
			t.Errorf("%d: size %d name %q descr %q", c.d, c.d.ItemSize(), c.d.String(), NPYDescr(c.d))
		}
		if c.descr != "" && DTypeOfDescr(c.descr) != c.d {
			t.Errorf("DTypeOfDescr(%q) = %v", c.descr, DTypeOfDescr(c.descr))
		}
	}
	for _, c := range []struct {
		x    uint64
		want DType
	}{{0, Uint8}, {255, Uint8}, {256, Uint16}, {65535, Uint16}, {65536, Uint32}, {1<<32 - 1, Uint32}, {1 << 32, Uint64}} {
		if got := SmallestUint(c.x); got != c.want {
			t.Errorf("SmallestUint(%d) = %v, want %v", c.x, got, c.want)
		}
	}
	for _, d := range []string{"<i8", ">f4", "|u2", "<U5", "f4", "<f4 "} {
		if DTypeOfDescr(d) != 0 {
			t.Errorf("DTypeOfDescr(%q) = %v", d, DTypeOfDescr(d))
		}
	}
}

func TestAppendFloat64s(t *testing.T) {
	cases := []struct {
		d    DType
		raw  []byte
		want []float64
	}{
		{Uint8, []byte{0, 7, 255}, []float64{0, 7, 255}},
		{Uint16, []byte{1, 0, 0, 1}, []float64{1, 256}},
		{Float16, []byte{0x00, 0x3c, 0x00, 0xc0, 0x01, 0x00, 0x00, 0x7c}, []float64{1, -2, 5.960464477539063e-08, posInf}},
		{Float32, f32bytes([]float32{1.5, -0.25}), []float64{1.5, -0.25}},
		{Float64, binary.LittleEndian.AppendUint64(nil, 0x3ff8000000000000), []float64{1.5}},
	}
	for _, c := range cases {
		got, err := AppendFloat64s(nil, c.d, c.raw)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v %x: %v %v, want %v", c.d, c.raw, got, err, c.want)
		}
	}
	if _, err := AppendFloat64s(nil, Float32, []byte{1, 2, 3}); err == nil {
		t.Error("3 bytes of float32 accepted")
	}
	if _, err := AppendUint64s(nil, Float32, []byte{1, 2, 3, 4}); err == nil {
		t.Error("AppendUint64s accepted float32")
	}
	got, err := AppendUint64s(nil, Uint32, u32bytes([]uint32{3, 1 << 31}))
	if err != nil || !reflect.DeepEqual(got, []uint64{3, 1 << 31}) {
		t.Errorf("AppendUint64s: %v %v", got, err)
	}
}

var posInf = func() float64 { var z float64; return 1 / z }()
