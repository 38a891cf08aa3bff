package ratarmount

import (
	"encoding/binary"
	"fmt"
	"os"
)

// addSchemaRows adds entries (views and triggers: objects without a
// b-tree, rootpage 0) to sqlite_schema of the database that sqlitefile
// has just written to f, after its rows, as SQLite would by running their
// CREATE statements next.
//
// Why here: sqlitefile writes tables and indexes only, and the index needs
// view xattrs and its trigger, which ratarmount reads and inserts extended
// attributes through. A view or a trigger is nothing but a row of
// sqlite_schema, and ratarmount's schema is small and fixed: its
// sqlite_schema is one leaf page, page 1 (some 3,500 bytes of 4,096 with
// the view and the trigger, whatever the number of rows), so adding them
// is adding two cells to that page. A declaration of views and triggers in
// sqlitefile would be the better home for this; until it has one, this
// edits only that page and refuses any other layout of it.
//
// The cells follow SQLite's file format (https://www.sqlite.org/fileformat2.html):
// a table leaf cell is the record's length and the rowid as varints, then
// the record: its header (its own length, then a serial type per column)
// and the column values. rootpage 0 is serial type 8 (schema format 4),
// as SQLite stores it. The schema cookie goes up by one per object, as for
// SQLite's own CREATE statements.
func addSchemaRows(f *os.File, entries []SchemaEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var hdr [100]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil {
		return fmt.Errorf("reading the database header: %w", err)
	}
	pageSize := int(binary.BigEndian.Uint16(hdr[16:]))
	if pageSize == 1 {
		pageSize = 65536
	}
	usable := pageSize - int(hdr[20])
	page := make([]byte, pageSize)
	if _, err := f.ReadAt(page, 0); err != nil {
		return fmt.Errorf("reading page 1: %w", err)
	}
	const (
		bt       = 100 // the b-tree page header, after the file header
		leafHdr  = 8
		leafType = 13 // a table b-tree leaf page
	)
	bad := func(why string) error {
		return fmt.Errorf("sqlite_schema as written cannot take %d more rows: %s", len(entries), why)
	}
	if page[bt] != leafType {
		return bad("it is not a single leaf page")
	}
	if binary.BigEndian.Uint16(page[bt+1:]) != 0 || page[bt+7] != 0 {
		return bad("the page has free blocks")
	}
	ncells := int(binary.BigEndian.Uint16(page[bt+3:]))
	content := int(binary.BigEndian.Uint16(page[bt+5:]))
	if content == 0 {
		content = 65536
	}
	if ncells == 0 {
		return bad("it has no rows")
	}
	// The last cell has the largest rowid: SQLite keeps cells in rowid
	// order.
	last := int(binary.BigEndian.Uint16(page[bt+leafHdr+2*(ncells-1):]))
	if last < content || last >= usable {
		return bad("a cell pointer out of the page")
	}
	_, n := uvarint(page[last:])
	rowid, _ := uvarint(page[last+n:])

	cells := make([][]byte, len(entries))
	total := 0
	for i, e := range entries {
		rowid++
		rec := schemaRecord(e)
		if len(rec) > usable-35 { // longer spills to an overflow page
			return bad(fmt.Sprintf("%s %s: a row of %d bytes", e.Type, e.Name, len(rec)))
		}
		c := appendVarint(nil, uint64(len(rec)))
		c = appendVarint(c, rowid)
		cells[i] = append(c, rec...)
		total += len(cells[i])
	}
	ptrs := bt + leafHdr + 2*ncells
	if content-total < ptrs+2*len(entries) {
		return bad(fmt.Sprintf("%d bytes free, %d needed", content-ptrs, total+2*len(entries)))
	}
	for i, c := range cells {
		content -= len(c)
		copy(page[content:], c)
		binary.BigEndian.PutUint16(page[ptrs+2*i:], uint16(content))
	}
	binary.BigEndian.PutUint16(page[bt+3:], uint16(ncells+len(entries)))
	binary.BigEndian.PutUint16(page[bt+5:], uint16(content)) // content < 65536 here
	binary.BigEndian.PutUint32(page[40:], binary.BigEndian.Uint32(page[40:])+uint32(len(entries)))
	if _, err := f.WriteAt(page, 0); err != nil {
		return fmt.Errorf("writing page 1: %w", err)
	}
	return nil
}

// schemaRecord is the record of an sqlite_schema row (type, name,
// tbl_name, rootpage, sql) of an object without a b-tree.
func schemaRecord(e SchemaEntry) []byte {
	texts := []string{e.Type, e.Name, e.Table}
	var types []byte
	for _, s := range texts {
		types = appendVarint(types, uint64(2*len(s)+13))
	}
	types = append(types, 8) // rootpage: the integer 0
	types = appendVarint(types, uint64(2*len(e.SQL)+13))
	// The header's length counts its own varint.
	h := len(types) + 1
	for len(appendVarint(nil, uint64(h))) != h-len(types) {
		h++
	}
	rec := appendVarint(nil, uint64(h))
	rec = append(rec, types...)
	for _, s := range texts {
		rec = append(rec, s...)
	}
	return append(rec, e.SQL...)
}

// appendVarint appends v as an SQLite varint: big-endian groups of 7 bits,
// the high bit set on all but the last byte, a ninth byte holding 8 bits.
func appendVarint(b []byte, v uint64) []byte {
	if v > 1<<56-1 {
		var buf [9]byte
		buf[8] = byte(v)
		v >>= 8
		for i := 7; i >= 0; i-- {
			buf[i] = byte(v&0x7f) | 0x80
			v >>= 7
		}
		return append(b, buf[:]...)
	}
	var buf [8]byte
	i := len(buf) - 1
	buf[i] = byte(v & 0x7f)
	for v >>= 7; v != 0; v >>= 7 {
		i--
		buf[i] = byte(v&0x7f) | 0x80
	}
	return append(b, buf[i:]...)
}

// uvarint reads an SQLite varint and says how many bytes it took.
func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8 && i < len(b); i++ {
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return v, len(b)
	}
	return v<<8 | uint64(b[8]), 9
}
