package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"sync"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/safefile"
)

// Row groups are written here, not by parquet-go's writer. That writer
// copies each value into its column buffers, encodes pages into buffers
// it holds until the group ends (a group of 64 MiB, and the next filling
// while it is written: some 260 MiB of heap), then copies them out once
// more. Here a group holds references to its values, most of them the
// source's own mapped bytes, and each page goes to the file in vectored
// writes straight from them: the only copy is the system's. What the
// pages hold is the simplest Parquet every reader reads: data pages v1,
// PLAIN values, definition levels as RLE runs, no dictionary. parquet-go
// still makes the schema (an empty file of the same options, see
// newTemplate) and encodes the Thrift of headers and footer; its reader
// reads every file written.

// pageBytes ends a page past that many value bytes (a page holds at least
// one value, whole).
const pageBytes = 1 << 20

// copyBelow: values shorter than this are copied beside their lengths,
// so that a page of small values is a few pieces, not two per value.
const copyBelow = 512

// leaf is one leaf column of the layout.
type leaf struct {
	path   []string
	typ    format.Type // ByteArray or Int64
	maxDef uint8
	bounds bool // min and max kept in the chunk's statistics
}

// leavesOf lists the layout's leaf columns, in the schema's order.
func leavesOf(l *layout) []leaf {
	ls := []leaf{{path: []string{KeyColumn}, typ: format.ByteArray, maxDef: 1, bounds: true}}
	for _, c := range l.cols {
		switch c.kind {
		case kindImage:
			ls = append(ls, leaf{path: []string{c.name, "bytes"}, typ: format.ByteArray, maxDef: 2},
				leaf{path: []string{c.name, "path"}, typ: format.ByteArray, maxDef: 2, bounds: true})
		case kindInt64:
			ls = append(ls, leaf{path: []string{c.name}, typ: format.Int64, maxDef: 1, bounds: true})
		case kindString:
			ls = append(ls, leaf{path: []string{c.name}, typ: format.ByteArray, maxDef: 1, bounds: true})
		default:
			ls = append(ls, leaf{path: []string{c.name}, typ: format.ByteArray, maxDef: 1})
		}
	}
	return ls
}

// newTemplate is the footer of a file of no rows, as parquet-go writes it
// under the layout's schema and opts: the schema elements, column orders,
// key-value metadata and version every file written takes.
func newTemplate(l *layout, opts []pq.WriterOption) (*format.FileMetaData, error) {
	var b bytes.Buffer
	w := pq.NewWriter(&b, append([]pq.WriterOption{l.schema}, opts...)...)
	if err := w.Close(); err != nil {
		return nil, err
	}
	f, err := pq.OpenFile(bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		return nil, err
	}
	md := *f.Metadata()
	if got := len(md.Schema); got == 0 {
		return nil, fmt.Errorf("parquet-go wrote no schema")
	}
	return &md, nil
}

// cell is one leaf's value in a sample being built.
type cell struct {
	set bool
	b   []byte
	i   int64
}

// columnValues are a row group's values of one leaf: each row's
// definition level, and the values of the rows that have one.
type columnValues struct {
	defs  []uint8
	bytes [][]byte
	ints  []int64
}

// rowGroup is a row group being filled, or written.
type rowGroup struct {
	rows    int64
	cols    []columnValues
	regions []*mapped.Region // what its values point into: closed once written
	arena   valueArena
}

func newRowGroup(leaves int) *rowGroup { return &rowGroup{cols: make([]columnValues, leaves)} }

// add appends a sample: each leaf's cell, the key first.
func (g *rowGroup) add(ls []leaf, cells []cell) {
	for j := range cells {
		c, v := &cells[j], &g.cols[j]
		if !c.set {
			v.defs = append(v.defs, 0)
			continue
		}
		v.defs = append(v.defs, ls[j].maxDef)
		if ls[j].typ == format.Int64 {
			v.ints = append(v.ints, c.i)
		} else {
			v.bytes = append(v.bytes, c.b)
		}
	}
	g.rows++
}

// goneFrom names, for a value whose mapped bytes could not be written
// (mapped.GoneError), the source file they were mapped from and where, in
// an error of writing out; other errors are returned as they are.
func (g *rowGroup) goneFrom(err error, out string) error {
	var ge *mapped.GoneError
	if !errors.As(err, &ge) {
		return err
	}
	for _, r := range g.regions {
		if name, off, ok := r.Where(ge.Piece); ok {
			return fmt.Errorf("%s: offset %d, writing %s: %w", name, off, out, mapped.ErrGone)
		}
	}
	return err
}

// reset empties g for the next group, its memory kept, and closes the
// mappings its values pointed into.
func (g *rowGroup) reset() {
	for _, r := range g.regions {
		r.Close()
	}
	clear(g.regions)
	g.regions = g.regions[:0]
	for j := range g.cols {
		v := &g.cols[j]
		clear(v.bytes)
		v.defs, v.bytes, v.ints = v.defs[:0], v.bytes[:0], v.ints[:0]
	}
	g.rows = 0
	g.arena.reset()
}

// valueArena holds copies of small values (keys, names, inline payloads) in
// blocks reused from group to group.
type valueArena struct {
	blocks [][]byte
	cur    int
}

const valueArenaBlock = 256 << 10

func (a *valueArena) copy(b []byte) []byte {
	if len(b) > valueArenaBlock/4 {
		return append([]byte(nil), b...)
	}
	for {
		if a.cur == len(a.blocks) {
			a.blocks = append(a.blocks, make([]byte, 0, valueArenaBlock))
		}
		blk := a.blocks[a.cur]
		if len(blk)+len(b) <= cap(blk) {
			n := len(blk)
			a.blocks[a.cur] = append(blk, b...)
			return a.blocks[a.cur][n : n+len(b) : n+len(b)]
		}
		a.cur++
	}
}

func (a *valueArena) reset() {
	for i := range a.blocks[:min(a.cur+1, len(a.blocks))] {
		a.blocks[i] = a.blocks[i][:0]
	}
	a.cur = 0
}

// fileWriter writes one file's row groups, in order, on a goroutine of its
// own while the next group fills, then its footer.
type fileWriter struct {
	f      *safefile.File
	meta   *format.FileMetaData // the template
	leaves []leaf
	codec  compress.Codec
	free   chan *rowGroup // where written groups go back to

	work chan *rowGroup
	done chan struct{}

	// The goroutine's.
	off     int64
	groups  []format.RowGroup
	rows    int64
	scratch []byte
	pieces  [][]byte
	spans   []span
	body    []byte
	packed  []byte

	mu  sync.Mutex
	err error
}

func newFileWriter(f *safefile.File, meta *format.FileMetaData, leaves []leaf, codec compress.Codec, free chan *rowGroup) (*fileWriter, error) {
	if _, err := f.WriteAt([]byte(magic), 0); err != nil {
		return nil, err
	}
	fw := &fileWriter{f: f, meta: meta, leaves: leaves, codec: codec, free: free, off: int64(len(magic)),
		work: make(chan *rowGroup, 2), done: make(chan struct{})}
	go fw.run()
	return fw, nil
}

func (fw *fileWriter) run() {
	defer close(fw.done)
	for g := range fw.work {
		if fw.failed() == nil {
			if err := mapped.Guard(func() error { return fw.writeGroup(g) }); err != nil {
				err = g.goneFrom(err, fw.f.Target())
				fw.mu.Lock()
				fw.err = err
				fw.mu.Unlock()
			}
		}
		g.reset()
		fw.free <- g
	}
}

func (fw *fileWriter) failed() error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.err
}

// commit hands a filled group over; it returns an earlier group's error.
func (fw *fileWriter) commit(g *rowGroup) error {
	if err := fw.failed(); err != nil {
		return err
	}
	fw.work <- g
	return nil
}

// close waits for the groups handed over and, unless one failed (or
// abandon), writes the footer.
func (fw *fileWriter) close(abandon bool) error {
	close(fw.work)
	<-fw.done
	if err := fw.failed(); err != nil || abandon {
		return err
	}
	md := *fw.meta
	md.NumRows, md.RowGroups = fw.rows, fw.groups
	b, err := thrift.Marshal(new(thrift.CompactProtocol), &md)
	if err != nil {
		return err
	}
	b = binary.LittleEndian.AppendUint32(b, uint32(len(b)))
	b = append(b, magic...)
	_, err = fw.f.WriteAt(b, fw.off)
	return err
}

// writeGroup writes g's column chunks and keeps its metadata.
func (fw *fileWriter) writeGroup(g *rowGroup) error {
	rg := format.RowGroup{NumRows: g.rows, FileOffset: fw.off, Ordinal: int16(len(fw.groups))}
	for j := range fw.leaves {
		cc, err := fw.writeChunk(&fw.leaves[j], &g.cols[j])
		if err != nil {
			return err
		}
		rg.Columns = append(rg.Columns, cc)
		rg.TotalByteSize += cc.MetaData.TotalUncompressedSize
		rg.TotalCompressedSize += cc.MetaData.TotalCompressedSize
	}
	fw.groups = append(fw.groups, rg)
	fw.rows += g.rows
	return nil
}

// writeChunk writes a leaf's values as a column chunk of pages of about
// pageBytes each.
func (fw *fileWriter) writeChunk(lf *leaf, v *columnValues) (format.ColumnChunk, error) {
	start := fw.off
	md := format.ColumnMetaData{Type: lf.typ, Encoding: []format.Encoding{format.Plain, format.RLE},
		PathInSchema: lf.path, Codec: fw.codec.CompressionCodec(), NumValues: int64(len(v.defs)), DataPageOffset: start}
	st := &md.Statistics
	var lo, hi []byte
	var ilo, ihi int64
	row, val := 0, 0
	for row < len(v.defs) {
		// The page's rows [row, end) and values [val, vend).
		end, vend, size := row, val, 0
		for end < len(v.defs) && (size < pageBytes || end == row) {
			if v.defs[end] == lf.maxDef {
				if lf.typ == format.Int64 {
					size += 8
				} else {
					size += 4 + len(v.bytes[vend])
				}
				vend++
			}
			end++
		}
		if err := fw.writePage(lf, v, row, end, val, vend, size, &md); err != nil {
			return format.ColumnChunk{}, err
		}
		if lf.bounds {
			for k := val; k < vend; k++ {
				if lf.typ == format.Int64 {
					x := v.ints[k]
					if k == 0 || x < ilo {
						ilo = x
					}
					if k == 0 || x > ihi {
						ihi = x
					}
					continue
				}
				x := v.bytes[k]
				if k == 0 || bytes.Compare(x, lo) < 0 {
					lo = x
				}
				if k == 0 || bytes.Compare(x, hi) > 0 {
					hi = x
				}
			}
		}
		st.NullCount += int64(end - row - (vend - val))
		row, val = end, vend
	}
	if lf.bounds && val > 0 {
		if lf.typ == format.Int64 {
			lo = binary.LittleEndian.AppendUint64(nil, uint64(ilo))
			hi = binary.LittleEndian.AppendUint64(nil, uint64(ihi))
		} else {
			lo, hi = bytes.Clone(lo), bytes.Clone(hi)
		}
		st.MinValue, st.MaxValue = lo, hi
	}
	return format.ColumnChunk{FileOffset: start, MetaData: md}, nil
}

// span is a piece of a page: bytes [from, to) of the scratch buffer, or
// (to < 0) a value given as it is.
type span struct {
	from, to int
	b        []byte
}

// writePage writes the page of rows [row, end), values [val, vend), whose
// PLAIN values take size bytes.
func (fw *fileWriter) writePage(lf *leaf, v *columnValues, row, end, val, vend, size int, md *format.ColumnMetaData) error {
	levels := fw.packed[:0]
	levels = binary.LittleEndian.AppendUint32(levels, 0)
	levels = appendRuns(levels, v.defs[row:end])
	binary.LittleEndian.PutUint32(levels, uint32(len(levels)-4))
	fw.packed = levels
	raw := len(levels) + size
	if raw > math.MaxInt32 {
		return fmt.Errorf("column %v: a value of %d bytes: more than a Parquet page holds", lf.path, size)
	}
	h := format.PageHeader{Type: format.DataPage, UncompressedPageSize: int32(raw), CompressedPageSize: int32(raw)}
	h.DataPageHeader.Valid = true
	h.DataPageHeader.V = format.DataPageHeader{NumValues: int32(end - row), Encoding: format.Plain,
		DefinitionLevelEncoding: format.RLE, RepetitionLevelEncoding: format.RLE}

	// The page's body: compressed whole, or (uncompressed) its levels,
	// lengths and small values in scratch, its larger values as they are.
	pieces := append(fw.pieces[:0], nil) // the header, once the body is known
	if fw.codec.CompressionCodec() != format.Uncompressed {
		body := append(fw.body[:0], levels...)
		body = appendValues(body, lf, v, val, vend)
		fw.body = body
		packed, err := fw.codec.Encode(fw.scratch[:0], body)
		if err != nil {
			return err
		}
		fw.scratch = packed
		h.CompressedPageSize = int32(len(packed))
		pieces = append(pieces, packed)
	} else {
		s := append(fw.scratch[:0], levels...)
		spans := fw.spans[:0]
		from := 0
		if lf.typ == format.Int64 {
			for _, x := range v.ints[val:vend] {
				s = binary.LittleEndian.AppendUint64(s, uint64(x))
			}
		} else {
			for _, b := range v.bytes[val:vend] {
				s = binary.LittleEndian.AppendUint32(s, uint32(len(b)))
				if len(b) < copyBelow {
					s = append(s, b...)
					continue
				}
				spans = append(spans, span{from, len(s), nil}, span{0, -1, b})
				from = len(s)
			}
		}
		spans = append(spans, span{from, len(s), nil})
		fw.scratch, fw.spans = s, spans
		for _, sp := range spans {
			switch {
			case sp.to < 0:
				pieces = append(pieces, sp.b)
			case sp.to > sp.from:
				pieces = append(pieces, s[sp.from:sp.to])
			}
		}
		clear(fw.spans)
	}
	// Readers check a page's checksum (parquet-go does): damaged bytes are
	// then an error, not a value.
	var crc uint32
	for _, p := range pieces[1:] {
		crc = crc32.Update(crc, crc32.IEEETable, p)
	}
	h.CRC = int32(crc)
	hb, err := thrift.Marshal(new(thrift.CompactProtocol), &h)
	if err != nil {
		return err
	}
	md.TotalUncompressedSize += int64(len(hb) + raw)
	md.TotalCompressedSize += int64(len(hb)) + int64(h.CompressedPageSize)
	pieces[0] = hb
	fw.pieces = pieces
	err = fw.writePieces(pieces)
	clear(fw.pieces)
	return err
}

// writePieces writes pieces at the file's end.
func (fw *fileWriter) writePieces(pieces [][]byte) error {
	n := 0
	for _, p := range pieces {
		n += len(p)
	}
	fw.f.ReserveAhead(fw.off + int64(n))
	if err := mapped.WritePieces(fw.f.File, pieces, fw.off); err != nil {
		return err
	}
	fw.off += int64(n)
	fw.f.WriteBehind(fw.off)
	return nil
}

// appendValues appends the PLAIN encoding of values [val, vend).
func appendValues(b []byte, lf *leaf, v *columnValues, val, vend int) []byte {
	if lf.typ == format.Int64 {
		for _, x := range v.ints[val:vend] {
			b = binary.LittleEndian.AppendUint64(b, uint64(x))
		}
		return b
	}
	for _, x := range v.bytes[val:vend] {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(x)))
		b = append(b, x...)
	}
	return b
}

// appendRuns appends levels (at most 255, so a byte each) in the RLE /
// bit-packing hybrid encoding, as RLE runs only.
func appendRuns(b []byte, levels []uint8) []byte {
	for i := 0; i < len(levels); {
		j := i + 1
		for j < len(levels) && levels[j] == levels[i] {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i)<<1)
		b = append(b, levels[i])
		i = j
	}
	return b
}
