package scdl

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/human"
)

// Magic opens every header.sch.
const Magic = "SCDL"

// coreSize is the fixed part of the header: magic, version, endianness,
// backend and array count.
const coreSize = 16

// maxNameLen is bionemo's limit on array and feature index names, in bytes.
const maxNameLen = 1024

// Header is the content of header.sch. It is all big-endian (network
// order): the core of 16 bytes, the array descriptors, then a u32 count of
// feature indices and their descriptors.
type Header struct {
	Major, Minor, Point uint8
	Endianness          uint8  // always EndianNetwork
	Backend             uint32 // always BackendMemmapV0
	Arrays              []ArrayInfo
	FeatureIndices      []FeatureIndexInfo
}

// ArrayInfo describes one array: u32 name length, the UTF-8 name, u64
// length in elements, u32 dtype, u8 has_shape, and with a shape its u32
// dimension count and u32 dimensions.
type ArrayInfo struct {
	Name   string
	Length uint64
	DType  DType
	Shape  []uint32 // nil: no shape (has_shape 0)
}

// FeatureIndexInfo describes one feature index: name, u64 length, u32
// dtype, u32 file count and that many length-prefixed paths, then the
// shape as for an array.
type FeatureIndexInfo struct {
	Name   string
	Length uint64
	DType  DType
	Files  []string // paths relative to the archive directory
	Shape  []uint32 // nil: no shape
}

// NewHeader returns the header of version 0.1.0, network endianness and
// the MEMMAP_V0 backend, as bionemo-scdl 0.1.3 writes, without arrays.
func NewHeader() *Header {
	return &Header{
		Major: VersionMajor, Minor: VersionMinor, Point: VersionPoint,
		Endianness: EndianNetwork, Backend: BackendMemmapV0,
	}
}

// Array returns the array descriptor of that name, or nil.
func (h *Header) Array(name string) *ArrayInfo {
	for i := range h.Arrays {
		if h.Arrays[i].Name == name {
			return &h.Arrays[i]
		}
	}
	return nil
}

// FeatureIndex returns the feature index descriptor of that name, or nil.
func (h *Header) FeatureIndex(name string) *FeatureIndexInfo {
	for i := range h.FeatureIndices {
		if h.FeatureIndices[i].Name == name {
			return &h.FeatureIndices[i]
		}
	}
	return nil
}

// decoder reads big-endian fields, tracking the offset for errors.
type decoder struct {
	b   []byte
	off int
}

func (d *decoder) need(n uint64, what string) error {
	if rest := uint64(len(d.b) - d.off); n > rest {
		return errorf("", int64(d.off), ErrTruncated, "%s needs %d bytes, the header has %d left", what, n, rest)
	}
	return nil
}

func (d *decoder) u8(what string) (uint8, error) {
	if err := d.need(1, what); err != nil {
		return 0, err
	}
	d.off++
	return d.b[d.off-1], nil
}

func (d *decoder) u32(what string) (uint32, error) {
	if err := d.need(4, what); err != nil {
		return 0, err
	}
	d.off += 4
	return binary.BigEndian.Uint32(d.b[d.off-4:]), nil
}

func (d *decoder) u64(what string) (uint64, error) {
	if err := d.need(8, what); err != nil {
		return 0, err
	}
	d.off += 8
	return binary.BigEndian.Uint64(d.b[d.off-8:]), nil
}

func (d *decoder) str(what string) (string, error) {
	n, err := d.u32(what + " length")
	if err != nil {
		return "", err
	}
	if err := d.need(uint64(n), what); err != nil {
		return "", err
	}
	s := d.b[d.off : d.off+int(n)]
	if !utf8.Valid(s) {
		return "", errorf("", int64(d.off), ErrFormat, "%s %s is not valid UTF-8", what, human.NameBytes(s))
	}
	d.off += int(n)
	return string(s), nil
}

func (d *decoder) dtype(what string) (DType, error) {
	at := d.off
	v, err := d.u32(what)
	if err != nil {
		return 0, err
	}
	if !DType(v).Valid() {
		return 0, errorf("", int64(at), ErrUnsupported, "%s %d is not an ArrayDType (1-9)", what, v)
	}
	return DType(v), nil
}

// count reads a u32 count of items of at least min bytes each, refusing a
// count the rest of the header cannot hold before allocating for it.
func (d *decoder) count(what string, min uint64) (int, error) {
	at := d.off
	n, err := d.u32(what)
	if err != nil {
		return 0, err
	}
	if rest := uint64(len(d.b) - d.off); uint64(n)*min > rest {
		return 0, errorf("", int64(at), ErrTruncated, "%s %d needs at least %d bytes, the header has %d left", what, n, uint64(n)*min, rest)
	}
	return int(n), nil
}

func (d *decoder) shape(what string) ([]uint32, error) {
	at := d.off
	has, err := d.u8(what + " has_shape")
	if err != nil {
		return nil, err
	}
	switch has {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, errorf("", int64(at), ErrFormat, "%s has_shape is %d, not 0 or 1", what, has)
	}
	n, err := d.count(what+" shape dimension count", 4)
	if err != nil {
		return nil, err
	}
	s := make([]uint32, n)
	for i := range s {
		s[i], _ = d.u32("")
	}
	return s, nil
}

// DecodeHeader decodes a whole header.sch. It makes the checks of
// bionemo-scdl's reader: the magic, endianness 1, backend 1, dtypes of the
// enum, truncation and UTF-8 strings; it is stricter in refusing a has_shape
// byte other than 0 or 1, a header without the feature index count (no
// bionemo version ever wrote one) and bytes after the last descriptor, so
// that whatever it accepts encodes back to the same bytes. Like bionemo, it
// does not check the version or the names (see MarshalBinary). Errors are
// *Error with the offset of the field concerned and an empty Path.
func DecodeHeader(b []byte) (*Header, error) {
	if n := min(len(b), len(Magic)); string(b[:n]) != Magic[:n] {
		return nil, errorf("", 0, ErrFormat, "bad magic %q, want %q", b[:n], Magic)
	}
	if len(b) < coreSize {
		return nil, errorf("", int64(len(b)), ErrTruncated, "header of %d bytes is shorter than its %d-byte core", len(b), coreSize)
	}
	h := &Header{Major: b[4], Minor: b[5], Point: b[6], Endianness: b[7]}
	if h.Endianness != EndianNetwork {
		return nil, errorf("", 7, ErrUnsupported, "endianness %d, want %d (network order)", h.Endianness, EndianNetwork)
	}
	h.Backend = binary.BigEndian.Uint32(b[8:])
	if h.Backend != BackendMemmapV0 {
		return nil, errorf("", 8, ErrUnsupported, "backend %d, want %d (MEMMAP_V0)", h.Backend, BackendMemmapV0)
	}
	d := &decoder{b: b, off: 12}
	// An array descriptor takes at least 17 bytes, a feature index 21.
	n, err := d.count("array count", 17)
	if err != nil {
		return nil, err
	}
	for i := range n {
		what := fmt.Sprintf("array %d", i)
		var a ArrayInfo
		if a.Name, err = d.str(what + " name"); err != nil {
			return nil, err
		}
		what = "array " + human.Name(a.Name)
		if a.Length, err = d.u64(what + " length"); err != nil {
			return nil, err
		}
		if a.DType, err = d.dtype(what + " dtype"); err != nil {
			return nil, err
		}
		if a.Shape, err = d.shape(what); err != nil {
			return nil, err
		}
		h.Arrays = append(h.Arrays, a)
	}
	if n, err = d.count("feature index count", 21); err != nil {
		return nil, err
	}
	for i := range n {
		what := fmt.Sprintf("feature index %d", i)
		var fi FeatureIndexInfo
		if fi.Name, err = d.str(what + " name"); err != nil {
			return nil, err
		}
		what = "feature index " + human.Name(fi.Name)
		if fi.Length, err = d.u64(what + " length"); err != nil {
			return nil, err
		}
		if fi.DType, err = d.dtype(what + " dtype"); err != nil {
			return nil, err
		}
		nf, err := d.count(what+" file count", 4)
		if err != nil {
			return nil, err
		}
		fi.Files = make([]string, 0, nf)
		for j := range nf {
			f, err := d.str(fmt.Sprintf("%s file %d", what, j))
			if err != nil {
				return nil, err
			}
			fi.Files = append(fi.Files, f)
		}
		if fi.Shape, err = d.shape(what); err != nil {
			return nil, err
		}
		h.FeatureIndices = append(h.FeatureIndices, fi)
	}
	if d.off != len(b) {
		return nil, errorf("", int64(d.off), ErrFormat, "%d bytes after the last descriptor", len(b)-d.off)
	}
	return h, nil
}

// MarshalBinary encodes the header. It makes the checks of bionemo-scdl's
// writer (SCDLHeader.validate and the descriptors' own): major version 0,
// endianness 1, backend 1, dtypes of the enum, names and file paths that
// are not empty or blank, valid UTF-8 and (names) at most 1024 bytes,
// unique array names, unique feature index names, no name used by both, and
// a shape, when present, of at least one dimension, every one positive.
// Errors are *Error wrapping ErrInvalid, with Offset -1.
func (h *Header) MarshalBinary() ([]byte, error) {
	if err := h.validate(); err != nil {
		return nil, err
	}
	b := make([]byte, 0, 512)
	be := binary.BigEndian
	b = append(b, Magic...)
	b = append(b, h.Major, h.Minor, h.Point, h.Endianness)
	b = be.AppendUint32(b, h.Backend)
	b = be.AppendUint32(b, uint32(len(h.Arrays)))
	for _, a := range h.Arrays {
		b = appendString(b, a.Name)
		b = be.AppendUint64(b, a.Length)
		b = be.AppendUint32(b, uint32(a.DType))
		b = appendShape(b, a.Shape)
	}
	b = be.AppendUint32(b, uint32(len(h.FeatureIndices)))
	for _, fi := range h.FeatureIndices {
		b = appendString(b, fi.Name)
		b = be.AppendUint64(b, fi.Length)
		b = be.AppendUint32(b, uint32(fi.DType))
		b = be.AppendUint32(b, uint32(len(fi.Files)))
		for _, f := range fi.Files {
			b = appendString(b, f)
		}
		b = appendShape(b, fi.Shape)
	}
	return b, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	return append(b, s...)
}

func appendShape(b []byte, s []uint32) []byte {
	if s == nil {
		return append(b, 0)
	}
	b = append(b, 1)
	b = binary.BigEndian.AppendUint32(b, uint32(len(s)))
	for _, d := range s {
		b = binary.BigEndian.AppendUint32(b, d)
	}
	return b
}

func (h *Header) validate() error {
	bad := func(format string, args ...any) error {
		return errorf("", -1, ErrInvalid, format, args...)
	}
	switch {
	case h.Major > VersionMajor:
		return bad("version %d.%d.%d: bionemo-scdl writes major version %d only", h.Major, h.Minor, h.Point, VersionMajor)
	case h.Endianness != EndianNetwork:
		return bad("endianness %d, want %d (network order)", h.Endianness, EndianNetwork)
	case h.Backend != BackendMemmapV0:
		return bad("backend %d, want %d (MEMMAP_V0)", h.Backend, BackendMemmapV0)
	case uint64(len(h.Arrays)) > math.MaxUint32 || uint64(len(h.FeatureIndices)) > math.MaxUint32:
		return bad("more than 2^32-1 descriptors")
	}
	names := make(map[string]string, len(h.Arrays)+len(h.FeatureIndices))
	for _, a := range h.Arrays {
		if err := checkName("array", a.Name); err != nil {
			return err
		}
		if names[a.Name] != "" {
			return bad("array name %s twice", human.Name(a.Name))
		}
		names[a.Name] = "array"
		if !a.DType.Valid() {
			return bad("array %s: dtype %d is not an ArrayDType (1-9)", human.Name(a.Name), a.DType)
		}
		if err := checkShape("array "+a.Name, a.Shape); err != nil {
			return err
		}
	}
	for _, fi := range h.FeatureIndices {
		if err := checkName("feature index", fi.Name); err != nil {
			return err
		}
		switch names[fi.Name] {
		case "array":
			return bad("feature index %s has the name of an array", human.Name(fi.Name))
		case "feature index":
			return bad("feature index name %s twice", human.Name(fi.Name))
		}
		names[fi.Name] = "feature index"
		if !fi.DType.Valid() {
			return bad("feature index %s: dtype %d is not an ArrayDType (1-9)", human.Name(fi.Name), fi.DType)
		}
		if uint64(len(fi.Files)) > math.MaxUint32 {
			return bad("feature index %s: more than 2^32-1 files", human.Name(fi.Name))
		}
		for i, f := range fi.Files {
			if isBlank(f) {
				return bad("feature index %s: file path %d is empty", human.Name(fi.Name), i)
			}
			if !utf8.ValidString(f) {
				return bad("feature index %s: file path %s is not valid UTF-8", human.Name(fi.Name), human.Name(f))
			}
			if uint64(len(f)) > math.MaxUint32 {
				return bad("feature index %s: file path %d is too long", human.Name(fi.Name), i)
			}
		}
		if err := checkShape("feature index "+fi.Name, fi.Shape); err != nil {
			return err
		}
	}
	return nil
}

func checkName(kind, name string) error {
	switch {
	case isBlank(name):
		return errorf("", -1, ErrInvalid, "%s name %s is empty or blank", kind, human.Name(name))
	case !utf8.ValidString(name):
		return errorf("", -1, ErrInvalid, "%s name %s is not valid UTF-8", kind, human.Name(name))
	case len(name) > maxNameLen:
		return errorf("", -1, ErrInvalid, "%s name of %d bytes is longer than %d", kind, len(name), maxNameLen)
	}
	return nil
}

func checkShape(what string, s []uint32) error {
	if s == nil {
		return nil
	}
	if len(s) == 0 {
		return errorf("", -1, ErrInvalid, "%s: shape present but without dimensions", what)
	}
	if uint64(len(s)) > math.MaxUint32 {
		return errorf("", -1, ErrInvalid, "%s: more than 2^32-1 dimensions", what)
	}
	for i, d := range s {
		if d == 0 {
			return errorf("", -1, ErrInvalid, "%s: shape dimension %d is 0", what, i)
		}
	}
	return nil
}

// isBlank is Python's `not s.strip()`: empty or only white space, where
// Python's white space also counts the separators U+001C..U+001F.
func isBlank(s string) bool {
	return strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f
	}) == ""
}
