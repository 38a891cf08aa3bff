package mds

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// kind is how a column's stored bytes become a member's bytes.
type kind uint8

const (
	kindRaw    kind = iota // the member's bytes as they are: bytes, str, json, jpeg, png, str_*
	kindOpaque             // MDS's encoding of a structured value, kept as stored: pil, ndarray, pkl, ...
	kindInt                // a little-endian signed integer: decimal text
	kindUint               // a little-endian unsigned integer: decimal text
	kindFloat              // a little-endian IEEE float: decimal text
)

// encoding is a column encoding: how its bytes read, and its fixed size
// (0: each value has its own, stored before the sample's values).
type encoding struct {
	kind kind
	size int64
}

// encodings are MosaicML's (streaming/base/format/mds/encodings.py), by
// name; ndarray takes its configuration after a colon.
var encodings = map[string]encoding{
	"bytes": {kindRaw, 0}, "str": {kindRaw, 0}, "json": {kindRaw, 0},
	"jpeg": {kindRaw, 0}, "png": {kindRaw, 0},
	"str_int": {kindRaw, 0}, "str_float": {kindRaw, 0}, "str_decimal": {kindRaw, 0},
	"int":  {kindInt, 8},
	"int8": {kindInt, 1}, "int16": {kindInt, 2}, "int32": {kindInt, 4}, "int64": {kindInt, 8},
	"uint8": {kindUint, 1}, "uint16": {kindUint, 2}, "uint32": {kindUint, 4}, "uint64": {kindUint, 8},
	"float16": {kindFloat, 2}, "float32": {kindFloat, 4}, "float64": {kindFloat, 8},
	"pil": {kindOpaque, 0}, "jpeg_array": {kindOpaque, 0}, "jpegarray": {kindOpaque, 0},
	"list[pil]": {kindOpaque, 0}, "list[jpeg]": {kindOpaque, 0}, "list[png]": {kindOpaque, 0},
	"pkl": {kindOpaque, 0}, "ndarray": {kindOpaque, 0},
}

// ndarrayDtypes are the value types of MDS's ndarray, by their size.
var ndarrayDtypes = map[string]int64{
	"uint8": 1, "int8": 1, "uint16": 2, "int16": 2, "float16": 2,
	"uint32": 4, "int32": 4, "float32": 4, "uint64": 8, "int64": 8, "float64": 8,
}

// lookupEncoding returns the encoding a column's name in the index gives.
func lookupEncoding(name string) (encoding, error) {
	if e, ok := encodings[name]; ok {
		return e, nil
	}
	cfg, ok := strings.CutPrefix(name, "ndarray:")
	if !ok {
		return encoding{}, fmt.Errorf("encoding %q: %w", name, ErrUnsupported)
	}
	// ndarray:dtype or ndarray:dtype:d0,d1,...: a fixed size when both
	// the type and the shape are fixed.
	dtype, shape, hasShape := strings.Cut(cfg, ":")
	width, ok := ndarrayDtypes[dtype]
	if !ok {
		return encoding{}, fmt.Errorf("encoding %q: no dtype %q: %w", name, dtype, ErrUnsupported)
	}
	if !hasShape {
		return encoding{kindOpaque, 0}, nil
	}
	size := width
	for _, d := range strings.Split(shape, ",") {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil || n < 1 || size > maxUint32/n {
			return encoding{}, fmt.Errorf("encoding %q: bad shape: %w", name, ErrCorrupt)
		}
		size *= n
	}
	return encoding{kindOpaque, size}, nil
}

// checkSize: the index's size of a column is its encoding's.
func (e encoding) checkSize(size *int64) error {
	switch {
	case e.size == 0 && size != nil:
		return fmt.Errorf("size %d for an encoding of values of any size: %w", *size, ErrCorrupt)
	case e.size != 0 && (size == nil || *size != e.size):
		return fmt.Errorf("size %s for an encoding of %d bytes: %w", sizeText(size), e.size, ErrCorrupt)
	}
	return nil
}

func sizeText(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

// appendText appends a number's stored bytes (v, e.size of them) as
// decimal text.
func (e encoding) appendText(b, v []byte) []byte {
	var u uint64
	for i := len(v) - 1; i >= 0; i-- {
		u = u<<8 | uint64(v[i])
	}
	switch e.kind {
	case kindInt:
		shift := 64 - 8*uint(len(v))
		return strconv.AppendInt(b, int64(u<<shift)>>shift, 10)
	case kindUint:
		return strconv.AppendUint(b, u, 10)
	}
	switch len(v) {
	case 2:
		return appendHalf(b, uint16(u))
	case 4:
		f := float64(math.Float32frombits(uint32(u)))
		return appendPython(b, f, strconv.AppendFloat(nil, f, 'e', -1, 32))
	}
	f := math.Float64frombits(u)
	return appendPython(b, f, strconv.AppendFloat(nil, f, 'e', -1, 64))
}

// appendHalf appends a half-precision float as the shortest decimal
// text that reads back as it, as numpy prints a float16.
func appendHalf(b []byte, h uint16) []byte {
	f := float64(half(h))
	for p := 0; p < 8 && f == f && !math.IsInf(f, 0); p++ {
		t := strconv.AppendFloat(nil, f, 'e', p, 32)
		if g, err := strconv.ParseFloat(string(t), 32); err == nil && toHalf(float32(g)) == h {
			return appendPython(b, f, t)
		}
	}
	return appendPython(b, f, strconv.AppendFloat(nil, f, 'e', -1, 32))
}

// appendPython appends f as numpy prints its scalars (str; Python's repr
// of a float alike), from its shortest digits e (Go's 'e' format:
// d.ddde±XX): positional from 1e-4 up to 1e16, with ".0" when whole
// (65500.0, 0.0001, -0.0), else scientific (1e+16, 1.5e-05, a float32
// 0.0001: 1e-04, as it is under 1e-4); nan, inf, -inf. A float column of
// an MDS dataset so reads as the text a Python loader makes of its values.
func appendPython(b []byte, f float64, e []byte) []byte {
	switch {
	case f != f:
		return append(b, "nan"...)
	case math.IsInf(f, 1):
		return append(b, "inf"...)
	case math.IsInf(f, -1):
		return append(b, "-inf"...)
	}
	if e[0] == '-' {
		b, e = append(b, '-'), e[1:]
	}
	mant, exp, _ := bytes.Cut(e, []byte("e"))
	if a := math.Abs(f); a != 0 && (a < 1e-4 || a >= 1e16) {
		// Scientific: Go's text is numpy's once a lone ".0" is dropped.
		return append(append(b, bytes.TrimSuffix(mant, []byte(".0"))...), e[len(mant):]...)
	}
	x, _ := strconv.Atoi(string(exp))
	point := x + 1 // digits before the decimal point
	digits := bytes.Replace(mant, []byte("."), nil, 1)
	if len(digits) > 1 {
		digits = bytes.TrimRight(digits, "0")
	}
	switch {
	case point <= 0:
		b = append(b, "0."...)
		b = append(b, bytes.Repeat([]byte("0"), -point)...)
		return append(b, digits...)
	case point >= len(digits):
		b = append(b, digits...)
		b = append(b, bytes.Repeat([]byte("0"), point-len(digits))...)
		return append(b, ".0"...)
	}
	b = append(b, digits[:point]...)
	b = append(b, '.')
	return append(b, digits[point:]...)
}

// toHalf rounds a float32 to the nearest half-precision float (ties to
// even); the finite values of halves only, as appendHalf needs.
func toHalf(f float32) uint16 {
	x := math.Float32bits(f)
	sign := uint16(x>>16) & 0x8000
	exp := int(x>>23&0xff) - 127 + 15
	mant := x & 0x7fffff
	switch {
	case exp >= 0x1f:
		return sign | 0x7c00
	case exp <= 0:
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint(14 - exp)
		h := mant >> shift
		rem := mant & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

// half converts an IEEE half-precision float to a float32.
func half(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinities, NaNs
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp == 0 && frac == 0:
		return math.Float32frombits(sign)
	case exp == 0: // subnormal: frac x 2^-24
		f := float32(frac) / (1 << 24)
		if sign != 0 {
			f = -f
		}
		return f
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
}

// The writer picks, for each column of a shard, the richest encoding
// whose values read back as the same bytes.

// choice is what a column's values so far allow, one bit an encoding.
type choice uint8

const (
	canInt choice = 1 << iota
	canJSON
	canStr
	canJPEG
	canPNG
)

// intExts, textExts: the extensions whose values WebDataset's decoders
// read as an integer, as text.
var (
	intExts  = []string{"cls", "cls2", "id", "index", "inx"}
	textExts = []string{"txt", "text", "json", "transcript"}
)

// allowed is what one value of a column named ext allows.
func allowed(ext string, v []byte) choice {
	var c choice
	switch {
	case ext == "jpg" || ext == "jpeg":
		if bytes.HasPrefix(v, []byte{0xff, 0xd8, 0xff}) {
			c |= canJPEG
		}
	case ext == "png":
		if bytes.HasPrefix(v, []byte("\x89PNG\r\n\x1a\n")) {
			c |= canPNG
		}
	case slices.Contains(intExts, ext):
		if canonicalInt(v) {
			c |= canInt
		}
		if utf8.Valid(v) {
			c |= canStr
		}
	case slices.Contains(textExts, ext):
		if utf8.Valid(v) {
			c |= canStr
			// Python's json.loads reads what Go's encoding/json does, and
			// more (NaN, Infinity): what Go reads, it reads.
			if ext == "json" && json.Valid(v) {
				c |= canJSON
			}
		}
	}
	return c
}

// canonicalInt tells whether v is an int64 as Python's str(int) writes it.
func canonicalInt(v []byte) bool {
	if len(v) == 0 || len(v) > 20 {
		return false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return err == nil && string(strconv.AppendInt(nil, n, 10)) == string(v)
}

// name is the encoding a column's choice gives.
func (c choice) name() string {
	switch {
	case c&canInt != 0:
		return "int"
	case c&canJSON != 0:
		return "json"
	case c&canJPEG != 0:
		return "jpeg"
	case c&canPNG != 0:
		return "png"
	case c&canStr != 0:
		return "str"
	}
	return "bytes"
}

// parseInt is the integer a value's text is, where it allows int.
func parseInt(v []byte, allow choice) (int64, bool) {
	if allow&canInt == 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
