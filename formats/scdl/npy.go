package scdl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// NPY files. SCDL's own arrays (data.npy, row_ptr.npy, col_ptr.npy) are raw
// and have no NPY header; the feature indices' cumulative_sum_index.npy is
// a real NPY file, and so are the per-cell arrays a converter writes for
// numpy.load. These helpers read versions 1.0 to 3.0 and write 1.0, the
// version numpy.save writes whenever the header fits in 64 KiB.

// npyMagic opens every NPY file; the version bytes follow.
const npyMagic = "\x93NUMPY"

// npyAlign is the alignment of the data: numpy pads the header so that the
// data starts at a multiple of 64 bytes.
const npyAlign = 64

// npyGrowthDigits is numpy's spare room for the growth axis: it pads the
// header text by 21 minus the digits of the first dimension.
const npyGrowthDigits = 21

// NPYHeader is the header of an NPY file.
type NPYHeader struct {
	Major, Minor uint8
	Descr        string // numpy's dtype descr, "<f4"
	FortranOrder bool
	Shape        []int
	DataOffset   int // where the data starts: the size of the header
}

// Len is the number of elements: the product of the shape (1 for a 0-d
// array).
func (h *NPYHeader) Len() int {
	n := 1
	for _, d := range h.Shape {
		n *= d
	}
	return n
}

// NPYDescr is numpy's descr of a numeric dtype in little-endian order, as
// numpy.save writes it: "|u1" for uint8 (a single byte has no order),
// "<u2", "<u4", "<u8", "<f2", "<f4", "<f8"; "" for the string arrays.
func NPYDescr(d DType) string {
	switch d {
	case Uint8:
		return "|u1"
	case Uint16:
		return "<u2"
	case Uint32:
		return "<u4"
	case Uint64:
		return "<u8"
	case Float16:
		return "<f2"
	case Float32:
		return "<f4"
	case Float64:
		return "<f8"
	}
	return ""
}

// DTypeOfDescr is the inverse of NPYDescr; it also takes "<u1", "=" for
// little-endian order and "|" for one-byte types, and returns 0 for any
// other descr (big-endian, signed, strings).
func DTypeOfDescr(descr string) DType {
	if len(descr) != 3 {
		return 0
	}
	order, kind, size := descr[0], descr[1], descr[2]
	if order != '<' && order != '|' && order != '=' || order == '|' && size != '1' {
		return 0
	}
	switch string([]byte{kind, size}) {
	case "u1":
		return Uint8
	case "u2":
		return Uint16
	case "u4":
		return Uint32
	case "u8":
		return Uint64
	case "f2":
		return Float16
	case "f4":
		return Float32
	case "f8":
		return Float64
	}
	return 0
}

// AppendNPYHeader appends the NPY 1.0 header of a 1-D array of n elements
// of dtype d, byte for byte what numpy.save writes: the dict text, spaces
// to pad the whole header to a multiple of 64 bytes, a newline. The array's
// n x d.ItemSize() little-endian bytes follow it; a 1-D header is always
// 128 bytes.
func AppendNPYHeader(dst []byte, d DType, n int) ([]byte, error) {
	descr := NPYDescr(d)
	if descr == "" || n < 0 {
		return dst, fmt.Errorf("scdl: no NPY header for %d elements of %v", n, d)
	}
	return appendNPYHeader(dst, descr, n), nil
}

// appendNPYHeader writes numpy's header for a 1-D array in C order.
func appendNPYHeader(dst []byte, descr string, n int) []byte {
	return appendNPYHeaderShape(dst, descr, strconv.Itoa(n)+",")
}

// appendNPYHeaderShape writes numpy's header for an array of the shape
// given as numpy writes it ("5," for 1-D, "" for a scalar), leaving room
// for the last axis to grow as numpy does.
func appendNPYHeaderShape(dst []byte, descr string, shape string) []byte {
	start := len(dst)
	dst = append(dst, npyMagic...)
	dst = append(dst, 1, 0, 0, 0) // version 1.0, then the header length
	dst = append(dst, "{'descr': '"...)
	dst = append(dst, descr...)
	dst = append(dst, "', 'fortran_order': False, 'shape': ("...)
	dst = append(dst, shape...)
	dst = append(dst, "), }"...)
	digits := len(strings.TrimSuffix(shape, ","))
	if i := strings.LastIndexByte(strings.TrimSuffix(shape, ","), ','); i >= 0 {
		digits -= i + 2
	}
	for range npyGrowthDigits - digits {
		dst = append(dst, ' ')
	}
	for (len(dst)-start+1)%npyAlign != 0 {
		dst = append(dst, ' ')
	}
	dst = append(dst, '\n')
	binary.LittleEndian.PutUint16(dst[start+8:], uint16(len(dst)-start-10))
	return dst
}

// WriteNPY writes a 1-D NPY 1.0 file of n elements of dtype d, whose raw
// little-endian bytes are data (n x d.ItemSize() of them), as numpy.save
// would.
func WriteNPY(w io.Writer, d DType, data []byte, n int) error {
	if d.ItemSize() == 0 || n < 0 || len(data) != n*d.ItemSize() {
		return fmt.Errorf("scdl: WriteNPY: %d bytes for %d elements of %v", len(data), n, d)
	}
	var buf [128]byte
	hdr, _ := AppendNPYHeader(buf[:0], d, n)
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(data)
	return err
}

// ReadNPYHeader reads and parses the header of an NPY file of version 1.0,
// 2.0 or 3.0, leaving r at the start of the data.
func ReadNPYHeader(r io.Reader) (*NPYHeader, error) {
	b := make([]byte, 12, 256)
	n, err := io.ReadFull(r, b[:10])
	if err == nil && b[6] >= 2 {
		var m int
		m, err = io.ReadFull(r, b[10:12])
		n += m
	}
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	h, perr := ParseNPYHeader(b[:n])
	if err != nil || !isTruncated(perr) {
		return h, perr
	}
	hlen := int(binary.LittleEndian.Uint16(b[8:]))
	if n == 12 {
		hlen = int(binary.LittleEndian.Uint32(b[8:]))
	}
	if hlen > 1<<20 {
		return nil, errorf("", 8, ErrFormat, "NPY header length %d is implausible", hlen)
	}
	b = append(b[:n], make([]byte, hlen)...)
	m, err := io.ReadFull(r, b[n:])
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return ParseNPYHeader(b[:n+m])
}

func isTruncated(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Err == ErrTruncated
}

// ParseNPYHeader parses the NPY header at the start of b (which may hold
// more: the data). Errors are *Error with the offset concerned: ErrFormat
// for what is not an NPY header, ErrTruncated when b ends inside it.
func ParseNPYHeader(b []byte) (*NPYHeader, error) {
	if n := min(len(b), len(npyMagic)); string(b[:n]) != npyMagic[:n] {
		return nil, errorf("", 0, ErrFormat, "bad NPY magic %q", b[:n])
	}
	if len(b) < 10 {
		return nil, errorf("", int64(len(b)), ErrTruncated, "NPY file of %d bytes ends inside its preamble", len(b))
	}
	h := &NPYHeader{Major: b[6], Minor: b[7]}
	var hlen, start int
	switch h.Major {
	case 1:
		hlen, start = int(binary.LittleEndian.Uint16(b[8:])), 10
	case 2, 3:
		if len(b) < 12 {
			return nil, errorf("", int64(len(b)), ErrTruncated, "NPY file of %d bytes ends inside its preamble", len(b))
		}
		u := binary.LittleEndian.Uint32(b[8:])
		if u > 1<<30 {
			return nil, errorf("", 8, ErrFormat, "NPY header length %d is implausible", u)
		}
		hlen, start = int(u), 12
	default:
		return nil, errorf("", 6, ErrUnsupported, "NPY version %d.%d (this reader knows 1.0 to 3.0)", h.Major, h.Minor)
	}
	if len(b) < start+hlen {
		return nil, errorf("", int64(len(b)), ErrTruncated, "NPY header of %d bytes ends at %d", hlen, len(b))
	}
	h.DataOffset = start + hlen
	text := b[start:h.DataOffset]
	if err := parseNPYDict(h, text); err != nil {
		return nil, errorf("", int64(start), ErrFormat, "NPY header %q: %v", bytes.TrimRight(text, " \n"), err)
	}
	return h, nil
}

// parseNPYDict parses the header text: a Python dict literal with the keys
// descr (a string), fortran_order (True or False) and shape (a tuple of
// non-negative integers), as numpy's reader requires.
func parseNPYDict(h *NPYHeader, text []byte) error {
	p := &pyParser{s: text}
	if !p.eat('{') {
		return fmt.Errorf("not a dict")
	}
	seen := map[string]bool{}
	for !p.eat('}') {
		key, ok := p.str()
		if !ok || !p.eat(':') {
			return fmt.Errorf("bad key at %d", p.i)
		}
		if seen[key] {
			return fmt.Errorf("key %q twice", key)
		}
		seen[key] = true
		switch key {
		case "descr":
			if h.Descr, ok = p.str(); !ok {
				return fmt.Errorf("descr is not a string (record dtypes are not supported)")
			}
		case "fortran_order":
			switch {
			case p.word("True"):
				h.FortranOrder = true
			case p.word("False"):
			default:
				return fmt.Errorf("fortran_order is not True or False")
			}
		case "shape":
			if h.Shape, ok = p.tuple(); !ok {
				return fmt.Errorf("shape is not a tuple of integers")
			}
		default:
			return fmt.Errorf("unknown key %q", key)
		}
		if !p.eat(',') {
			if !p.eat('}') {
				return fmt.Errorf("expected ',' or '}' at %d", p.i)
			}
			break
		}
	}
	if p.skip(); p.i != len(p.s) {
		return fmt.Errorf("text after the dict")
	}
	if len(seen) != 3 {
		return fmt.Errorf("keys descr, fortran_order and shape are required")
	}
	return nil
}

// pyParser reads the few Python literals an NPY header holds.
type pyParser struct {
	s []byte
	i int
}

func (p *pyParser) skip() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\n' || p.s[p.i] == '\t' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *pyParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

func (p *pyParser) word(w string) bool {
	p.skip()
	if bytes.HasPrefix(p.s[p.i:], []byte(w)) {
		p.i += len(w)
		return true
	}
	return false
}

// str reads a quoted string without escapes (numpy's keys and descrs have
// none).
func (p *pyParser) str() (string, bool) {
	p.skip()
	if p.i >= len(p.s) || p.s[p.i] != '\'' && p.s[p.i] != '"' {
		return "", false
	}
	q := p.s[p.i]
	end := bytes.IndexByte(p.s[p.i+1:], q)
	if end < 0 || bytes.IndexByte(p.s[p.i+1:p.i+1+end], '\\') >= 0 {
		return "", false
	}
	s := string(p.s[p.i+1 : p.i+1+end])
	p.i += end + 2
	return s, true
}

func (p *pyParser) tuple() ([]int, bool) {
	if !p.eat('(') {
		return nil, false
	}
	dims := []int{}
	for !p.eat(')') {
		p.skip()
		j := p.i
		for j < len(p.s) && p.s[j] >= '0' && p.s[j] <= '9' {
			j++
		}
		v, err := strconv.ParseInt(string(p.s[p.i:j]), 10, 64)
		if err != nil {
			return nil, false
		}
		p.i = j
		dims = append(dims, int(v))
		if !p.eat(',') {
			// (2) is an int, not a tuple: one element needs its comma.
			if len(dims) == 1 || !p.eat(')') {
				return nil, false
			}
			break
		}
	}
	return dims, true
}
