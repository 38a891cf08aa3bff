package testutil

import "encoding/binary"

// FakeParquet returns a Parquet file reduced to what scdl.Open reads: the magic
// at both ends and a footer whose FileMetaData (Thrift compact) has a
// schema of one string column and num_rows rows. It has no data pages.
func FakeParquet(rows int64) []byte {
	var m []byte
	zz := func(v int64) []byte { return binary.AppendUvarint(nil, uint64(v<<1^(v>>63))) }
	str := func(s string) []byte { return append(binary.AppendUvarint(nil, uint64(len(s))), s...) }
	m = append(m, 0x15)             // field 1 (version), i32
	m = append(m, zz(1)...)         //
	m = append(m, 0x19, 0x2c)       // field 2 (schema), list of 2 structs
	m = append(m, 0x48)             // root: field 4 (name), binary
	m = append(m, str("schema")...) //
	m = append(m, 0x15)             // field 5 (num_children), i32
	m = append(m, zz(1)...)         //
	m = append(m, 0x00)             // end of root
	m = append(m, 0x15)             // column: field 1 (type), i32
	m = append(m, zz(6)...)         // BYTE_ARRAY
	m = append(m, 0x25)             // field 3 (repetition_type), i32
	m = append(m, zz(1)...)         // OPTIONAL
	m = append(m, 0x18)             // field 4 (name), binary
	m = append(m, str("gene")...)   //
	m = append(m, 0x00)             // end of column
	m = append(m, 0x16)             // field 3 (num_rows), i64
	m = append(m, zz(rows)...)      //
	m = append(m, 0x19, 0x0c)       // field 4 (row_groups), empty list
	m = append(m, 0x00)             // end of FileMetaData
	b := append([]byte("PAR1"), m...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(m)))
	return append(b, "PAR1"...)
}
