package scdl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// A var_features block's number of genes is the number of rows of its
// dataframe_<k>.parquet (bionemo loads the table and counts the entries of
// its first column; a table without columns counts 0). This file reads just
// that from the Parquet footer, and nothing else of Parquet: the file ends
// with the Thrift-compact FileMetaData, its u32 little-endian length and
// "PAR1"; FileMetaData's field 2 is the schema, whose first element (the
// root) has the number of top-level columns in its field 5, and field 3 is
// num_rows.

const parquetMagic = "PAR1"

// parquetRows returns the number of rows of a Parquet file's table, 0 for a
// table without columns.
func parquetRows(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	bad := func(off int64, kind error, format string, args ...any) error {
		return errorf(path, off, kind, "Parquet footer: "+format, args...)
	}
	if size < 12 {
		return 0, bad(size, ErrTruncated, "a Parquet file of %d bytes is shorter than its magic and footer", size)
	}
	var tail [8]byte
	var head [4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0, err
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, err
	}
	if string(head[:]) != parquetMagic || string(tail[4:]) != parquetMagic {
		return 0, bad(0, ErrFormat, "not a Parquet file (magic %q ... %q; an encrypted footer is not supported)", head[:], tail[4:])
	}
	n := int64(binary.LittleEndian.Uint32(tail[:]))
	if n > size-12 {
		return 0, bad(size-8, ErrFormat, "metadata length %d, but the file has %d bytes", n, size)
	}
	meta := make([]byte, n)
	if _, err := f.ReadAt(meta, size-8-n); err != nil {
		return 0, err
	}
	rows, cols, err := fileMetaData(meta)
	if err != nil {
		return 0, bad(size-8-n, ErrFormat, "%v", err)
	}
	if rows < 0 {
		return 0, bad(size-8-n, ErrFormat, "num_rows %d", rows)
	}
	if cols == 0 {
		return 0, nil
	}
	return rows, nil
}

// fileMetaData decodes num_rows and the root's num_children from a
// Thrift-compact FileMetaData.
func fileMetaData(b []byte) (rows, cols int64, err error) {
	t := &thrift{b: b}
	rows = -1
	for fid, typ := range t.fields() {
		switch {
		case fid == 2 && typ == tList:
			n, et := t.listHeader()
			for i := range n {
				if i == 0 && et == tStruct {
					for sf, st := range t.fields() {
						if sf == 5 && st == tI32 {
							cols = t.varint()
						} else {
							t.skip(st, 0)
						}
					}
					continue
				}
				t.skipElem(et, 0)
			}
		case fid == 3 && typ == tI64:
			rows = t.varint()
		default:
			t.skip(typ, 0)
		}
	}
	if t.err != nil {
		return 0, 0, t.err
	}
	if rows < 0 {
		return 0, 0, errors.New("the Parquet footer has no row count (num_rows)")
	}
	return rows, cols, nil
}

// Thrift compact protocol types.
const (
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// thrift reads the compact protocol; the first error sticks and makes every
// later read return zero values, so loops end.
type thrift struct {
	b   []byte
	i   int
	err error
}

func (t *thrift) fail(format string, args ...any) {
	if t.err == nil {
		t.err = fmt.Errorf("byte %d: "+format, append([]any{t.i}, args...)...)
	}
	t.i = len(t.b)
}

func (t *thrift) byte() byte {
	if t.i >= len(t.b) {
		t.fail("unexpected end")
		return 0
	}
	t.i++
	return t.b[t.i-1]
}

func (t *thrift) uvarint() uint64 {
	v, n := binary.Uvarint(t.b[t.i:])
	if n <= 0 {
		t.fail("bad varint")
		return 0
	}
	t.i += n
	return v
}

// varint reads a zigzag varint (i16, i32, i64).
func (t *thrift) varint() int64 {
	u := t.uvarint()
	return int64(u>>1) ^ -int64(u&1)
}

// fields iterates over a struct's fields until its stop byte.
func (t *thrift) fields() func(yield func(id int64, typ byte) bool) {
	return func(yield func(int64, byte) bool) {
		var id int64
		for t.err == nil {
			h := t.byte()
			if h == 0 || t.err != nil {
				return
			}
			if d := int64(h >> 4); d != 0 {
				id += d
			} else {
				id = t.varint()
			}
			if !yield(id, h&0x0f) {
				return
			}
		}
	}
}

func (t *thrift) listHeader() (int, byte) {
	h := t.byte()
	n := uint64(h >> 4)
	if n == 15 {
		n = t.uvarint()
	}
	if n > uint64(len(t.b)-t.i) { // every element takes at least a byte
		t.fail("list of %d elements", n)
		return 0, 0
	}
	return int(n), h & 0x0f
}

// skip passes over a value of type typ.
func (t *thrift) skip(typ byte, depth int) {
	if depth > 64 {
		t.fail("nested too deep")
		return
	}
	switch typ {
	case tTrue, tFalse:
		// a field's boolean lives in its type nibble
	case tByte:
		t.byte()
	case tI16, tI32, tI64:
		t.uvarint()
	case tDouble:
		t.advance(8)
	case tBinary:
		t.advance(t.uvarint())
	case tList, tSet:
		n, et := t.listHeader()
		for range n {
			t.skipElem(et, depth+1)
		}
	case tMap:
		n := t.uvarint()
		if n == 0 {
			return
		}
		kv := t.byte()
		if n > uint64(len(t.b)-t.i) {
			t.fail("map of %d entries", n)
			return
		}
		for range n {
			t.skipElem(kv>>4, depth+1)
			t.skipElem(kv&0x0f, depth+1)
		}
	case tStruct:
		for _, ft := range t.fields() {
			t.skip(ft, depth+1)
		}
	default:
		t.fail("unknown type %d", typ)
	}
}

// skipElem passes over an element of a list, set or map, where a boolean
// takes a byte of its own.
func (t *thrift) skipElem(typ byte, depth int) {
	if typ == tTrue || typ == tFalse {
		t.byte()
		return
	}
	t.skip(typ, depth)
}

func (t *thrift) advance(n uint64) {
	if n > uint64(len(t.b)-t.i) {
		t.fail("value of %d bytes past the end", n)
		return
	}
	t.i += int(n)
}
