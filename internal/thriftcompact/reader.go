package thriftcompact

import (
	"encoding/binary"
	"fmt"
)

// The compact protocol's types.
const (
	True   = 1
	False  = 2
	Byte   = 3
	I16    = 4
	I32    = 5
	I64    = 6
	Double = 7
	Binary = 8
	List   = 9
	Set    = 10
	Map    = 11
	Struct = 12
)

// maxDepth bounds the nesting Skip follows.
const maxDepth = 64

// Reader reads b; the first error sticks and makes every later read
// return zero values, so that loops end.
type Reader struct {
	b   []byte
	i   int
	err error
}

// NewReader reads b from its start.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first error, naming the byte where it was met.
func (r *Reader) Err() error { return r.err }

func (r *Reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("byte %d: "+format, append([]any{r.i}, args...)...)
	}
	r.i = len(r.b)
}

// Byte reads one byte.
func (r *Reader) Byte() byte {
	if r.i >= len(r.b) {
		r.fail("unexpected end")
		return 0
	}
	r.i++
	return r.b[r.i-1]
}

// Uvarint reads an unsigned varint.
func (r *Reader) Uvarint() uint64 {
	v, n := binary.Uvarint(r.b[r.i:])
	if n <= 0 {
		r.fail("bad varint")
		return 0
	}
	r.i += n
	return v
}

// Varint reads a zigzag varint (i16, i32, i64).
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// Fields iterates over a struct's fields, their ids and types, until its
// stop byte. The caller reads or skips each field's value.
func (r *Reader) Fields() func(yield func(id int64, typ byte) bool) {
	return func(yield func(int64, byte) bool) {
		var id int64
		for r.err == nil {
			h := r.Byte()
			if h == 0 || r.err != nil {
				return
			}
			if d := int64(h >> 4); d != 0 {
				id += d
			} else {
				id = r.Varint()
			}
			if !yield(id, h&0x0f) {
				return
			}
		}
	}
}

// ListHeader reads a list's or set's header: its number of elements (no
// more than the bytes left: every element takes a byte at least) and
// their type.
func (r *Reader) ListHeader() (int, byte) {
	h := r.Byte()
	n := uint64(h >> 4)
	if n == 15 {
		n = r.Uvarint()
	}
	if n > uint64(len(r.b)-r.i) {
		r.fail("list of %d elements, %d bytes left", n, len(r.b)-r.i)
		return 0, 0
	}
	return int(n), h & 0x0f
}

// Skip passes over a field's value of type typ (a struct: up to its stop
// byte).
func (r *Reader) Skip(typ byte) { r.skip(typ, 0) }

// SkipElem passes over an element of a list, set or map of type typ,
// where a boolean takes a byte of its own.
func (r *Reader) SkipElem(typ byte) { r.skipElem(typ, 0) }

func (r *Reader) skip(typ byte, depth int) {
	if depth > maxDepth {
		r.fail("nested deeper than %d", maxDepth)
		return
	}
	switch typ {
	case True, False:
		// a field's boolean lives in its type nibble
	case Byte:
		r.Byte()
	case I16, I32, I64:
		r.Uvarint()
	case Double:
		r.advance(8)
	case Binary:
		r.advance(r.Uvarint())
	case List, Set:
		n, et := r.ListHeader()
		for range n {
			r.skipElem(et, depth+1)
		}
	case Map:
		n := r.Uvarint()
		if n == 0 {
			return
		}
		kv := r.Byte()
		if n > uint64(len(r.b)-r.i) {
			r.fail("map of %d entries, %d bytes left", n, len(r.b)-r.i)
			return
		}
		for range n {
			r.skipElem(kv>>4, depth+1)
			r.skipElem(kv&0x0f, depth+1)
		}
	case Struct:
		for _, ft := range r.Fields() {
			r.skip(ft, depth+1)
		}
	default:
		r.fail("unknown type %d", typ)
	}
}

func (r *Reader) skipElem(typ byte, depth int) {
	if typ == True || typ == False {
		r.Byte()
		return
	}
	r.skip(typ, depth)
}

func (r *Reader) advance(n uint64) {
	if n > uint64(len(r.b)-r.i) {
		r.fail("value of %d bytes, %d bytes left", n, len(r.b)-r.i)
		return
	}
	r.i += int(n)
}
