package scdl

import (
	"encoding/binary"
	"errors"
	"os"

	"github.com/itarconv/itarconv/internal/thriftcompact"
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
	t := thriftcompact.NewReader(b)
	rows = -1
	for fid, typ := range t.Fields() {
		switch {
		case fid == 2 && typ == thriftcompact.List:
			n, et := t.ListHeader()
			for i := range n {
				if i == 0 && et == thriftcompact.Struct {
					for sf, st := range t.Fields() {
						if sf == 5 && st == thriftcompact.I32 {
							cols = t.Varint()
						} else {
							t.Skip(st)
						}
					}
					continue
				}
				t.SkipElem(et)
			}
		case fid == 3 && typ == thriftcompact.I64:
			rows = t.Varint()
		default:
			t.Skip(typ)
		}
	}
	if err := t.Err(); err != nil {
		return 0, 0, err
	}
	if rows < 0 {
		return 0, 0, errors.New("the Parquet footer has no row count (num_rows)")
	}
	return rows, cols, nil
}
