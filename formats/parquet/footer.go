package parquet

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// parquet-go decodes a footer's lists into slices as long as their
// headers claim, before it reads an element: a list header of a damaged
// footer claiming two billion row groups is that many structs allocated
// (and scanned by the collector). checkLists walks the footer's Thrift
// compact encoding once, decoding nothing, and refuses a list, set or map
// that claims more elements than bytes are left to hold them, and nesting
// deeper than maxDepth; parquet-go then decodes what passed.

var errLists = errors.New("Thrift list longer than its bytes")

const maxDepth = 64

// checkLists checks the Thrift compact struct b (see above).
func checkLists(b []byte) error {
	w := &walker{b: b}
	w.structure(0)
	return w.err
}

type walker struct {
	b   []byte
	i   int
	err error
}

func (w *walker) fail(format string, args ...any) {
	if w.err == nil {
		w.err = fmt.Errorf("footer byte %d: "+format+": %w", append(append([]any{w.i}, args...), errLists)...)
	}
	w.i = len(w.b)
}

func (w *walker) byte() byte {
	if w.i >= len(w.b) {
		w.fail("unexpected end")
		return 0
	}
	w.i++
	return w.b[w.i-1]
}

func (w *walker) uvarint() uint64 {
	v, n := binary.Uvarint(w.b[w.i:])
	if n <= 0 {
		w.fail("bad varint")
		return 0
	}
	w.i += n
	return v
}

func (w *walker) structure(depth int) {
	if depth > maxDepth {
		w.fail("nested deeper than %d", maxDepth)
		return
	}
	for w.err == nil {
		h := w.byte()
		if h == 0 {
			return
		}
		if h>>4 == 0 {
			w.uvarint() // the field id, zigzag
		}
		w.value(h&0x0f, depth)
	}
}

// count reads a collection's claimed size and refuses one its bytes cannot
// hold (every element takes a byte at least; a bool list element too).
func (w *walker) count(n uint64) int {
	if n > uint64(len(w.b)-w.i) {
		w.fail("%d elements claimed, %d bytes left", n, len(w.b)-w.i)
		return 0
	}
	return int(n)
}

func (w *walker) value(t byte, depth int) {
	switch t {
	case 1, 2: // true, false (in a field header)
	case 3: // byte
		w.byte()
	case 4, 5, 6: // i16, i32, i64
		w.uvarint()
	case 7: // double
		if w.i+8 > len(w.b) {
			w.fail("unexpected end")
			return
		}
		w.i += 8
	case 8: // binary
		n := w.count(w.uvarint())
		w.i += n
	case 9, 10: // list, set
		h := w.byte()
		n := uint64(h >> 4)
		if n == 15 {
			n = w.uvarint()
		}
		k := w.count(n)
		et := h & 0x0f
		for range k {
			if w.err != nil {
				return
			}
			if et == 1 || et == 2 {
				w.byte() // a bool element is a byte
				continue
			}
			w.value(et, depth+1)
		}
	case 11: // map
		n := w.count(w.uvarint())
		if n == 0 {
			return
		}
		kv := w.byte()
		for range n {
			if w.err != nil {
				return
			}
			w.value(kv>>4, depth+1)
			w.value(kv&0x0f, depth+1)
		}
	case 12: // struct
		w.structure(depth + 1)
	default:
		w.fail("type %d", t)
	}
}
