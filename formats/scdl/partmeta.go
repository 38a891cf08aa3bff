package scdl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
)

// ErrPart: a part of a partitioned run that MergeParts cannot use: not a
// finished part, one of another version of the part format, a file cut
// short or a description that does not hold together.
var ErrPart = errors.New("bad SCDL part")

// The files of a part directory (see WritePart).
const (
	// PartMetaFile describes the part; WritePart writes it last, so a
	// directory without it is not a finished part.
	PartMetaFile = "scdlpart.meta"

	partDataFile   = "data.bin"   // the whole cells' values, as in data.npy
	partColFile    = "col.bin"    // their gene indices, in the part's dtype
	partRowEndFile = "rowend.bin" // each whole cell's end in data.bin, in values (uint64)
	partEdgeFile   = "edges.bin"  // the bytes of the edge cells' members
	partFilesDir   = "files"      // every file beside the cells, numbered
)

// PartFormatVersion is the version of the part format this package writes
// and reads. Parts of another version are refused (ErrPart): a merge joins
// parts written by the same build.
const PartFormatVersion = 2

// partMagic opens PartMetaFile.
const partMagic = "SCDLPART"

// partMeta is what a part records besides its payload bytes: enough to
// take every decision WriteRows takes over the whole dataset.
//
// A part's cells are split three ways. Its first cell (the head) and its
// last (the tail) may have members in the neighbouring parts, so their
// members are kept as they are (edges.bin) and joined at the merge. The
// cells between them (the whole cells) are complete: their values and
// gene indices are in data.bin and col.bin as they will be in the
// archive, their ends in rowend.bin.
//
// Encoding (little-endian; a string is a u32 length and its bytes):
//
//	magic "SCDLPART", u32 version
//	u32 shards, string source (its first shard's name)
//	u64 member rows, string where the first member is
//	u64 whole cells, i64 first whole cell's row, u64 values,
//	u32 data dtype, string where the first whole cell's values are,
//	u32 col dtype, u8 any gene, u64 largest gene, u64 largest n_genes
//	u32 files, each: string name, u64 size, string where it comes from
//	u8 edge cells, each: i64 row, u8 members, each: u8 kind ('v', 'g',
//	  'j'), u32 dtype, u8 signed, u64 elements, i64 n_genes, u64 offset,
//	  u64 size, string where it comes from
//	u8 written in place (WriteRange), and if 1: u32 data dtype, u32 col
//	  dtype, u64 values of the run (the header's), u64 value offset of
//	  the first whole cell, string the run's data file, string its col file
//	u32 CRC-32 (IEEE) of everything before it
type partMeta struct {
	shards     int
	source     string
	members    uint64 // cells' member rows (WriteRows' count of cells)
	firstCell  string // where the first of them is, for errors
	cells      uint64 // whole cells
	firstRow   int64  // the row of the first whole cell
	nnz        uint64 // their values
	dataDT     DType  // their values' dtype
	dataWhere  string
	colDT      DType // the dtype of col.bin
	anyGene    bool
	maxGene    uint64
	nGenes     uint64 // the largest n_genes (> 0) of their .json members
	files      []partFile
	edges      []edgeCell
	edgesBytes int64      // size of edges.bin
	place      *placement // a part written in place, or nil
}

// placement is where a part written in place (WriteRange) put its whole
// cells: into the run's two array files, which data.bin and col.bin are
// hard links to, at the value offset first (first + nnz <= total). Where
// the dataset has no header (a fresh archive), only the values are
// placed, into the run's data file: colDT is 0, total 0 (no task knows
// it) and col empty; col.bin is the part's own, as WritePart writes it.
type placement struct {
	dataDT, colDT DType  // the header's: the array files' dtypes
	total         uint64 // the header's values: the files' length in elements
	first         uint64
	data, col     string // the run's names of the files, removed once merged
}

// valuesOnly: the part placed its values alone (no header).
func (pl *placement) valuesOnly() bool { return pl.colDT == 0 }

// partFile is a file beside the cells: files/<index> in the part.
type partFile struct {
	name  []byte // the row's name, without "./"
	size  int64
	where string
}

// edgeCell is the head or the tail of a part: the members of one cell
// that the part saw.
type edgeCell struct {
	row     int64
	members []edgeMember
}

// edgeMember is one member of an edge cell: what parsing it gave, and
// where its elements lie in edges.bin.
type edgeMember struct {
	kind      byte // 'v', 'g' or 'j'
	dtype     DType
	signed    bool
	n         uint64
	nGenes    int64
	off, size int64
	where     string
}

// maxPartElems bounds element counts so that sizes in bytes never overflow.
const maxPartElems = 1 << 59

func (m *partMeta) encode() []byte {
	b := []byte(partMagic)
	b = binary.LittleEndian.AppendUint32(b, PartFormatVersion)
	str := func(s string) {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(s)))
		b = append(b, s...)
	}
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	u32 := func(v uint32) { b = binary.LittleEndian.AppendUint32(b, v) }
	u32(uint32(m.shards))
	str(m.source)
	u64(m.members)
	str(m.firstCell)
	u64(m.cells)
	u64(uint64(m.firstRow))
	u64(m.nnz)
	u32(uint32(m.dataDT))
	str(m.dataWhere)
	u32(uint32(m.colDT))
	b = append(b, boolByte(m.anyGene))
	u64(m.maxGene)
	u64(m.nGenes)
	u32(uint32(len(m.files)))
	for _, f := range m.files {
		str(string(f.name))
		u64(uint64(f.size))
		str(f.where)
	}
	b = append(b, byte(len(m.edges)))
	for _, e := range m.edges {
		u64(uint64(e.row))
		b = append(b, byte(len(e.members)))
		for _, x := range e.members {
			b = append(b, x.kind)
			u32(uint32(x.dtype))
			b = append(b, boolByte(x.signed))
			u64(x.n)
			u64(uint64(x.nGenes))
			u64(uint64(x.off))
			u64(uint64(x.size))
			str(x.where)
		}
	}
	b = append(b, boolByte(m.place != nil))
	if pl := m.place; pl != nil {
		u32(uint32(pl.dataDT))
		u32(uint32(pl.colDT))
		u64(pl.total)
		u64(pl.first)
		str(pl.data)
		str(pl.col)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

func boolByte(v bool) byte {
	if v {
		return 1
	}
	return 0
}

// metaDecoder reads PartMetaFile's fields, keeping the offset for errors.
type metaDecoder struct {
	b   []byte
	off int
	err error
}

func (d *metaDecoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("offset %d: %s: %w", d.off, fmt.Sprintf(format, args...), ErrPart)
	}
}

func (d *metaDecoder) take(n int, what string) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b)-d.off {
		d.fail("%s needs %d bytes, %d are left: truncated", what, n, len(d.b)-d.off)
		return nil
	}
	d.off += n
	return d.b[d.off-n : d.off]
}

func (d *metaDecoder) u8(what string) byte {
	if p := d.take(1, what); p != nil {
		return p[0]
	}
	return 0
}

func (d *metaDecoder) u32(what string) uint32 {
	if p := d.take(4, what); p != nil {
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (d *metaDecoder) u64(what string) uint64 {
	if p := d.take(8, what); p != nil {
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

func (d *metaDecoder) str(what string) string {
	n := d.u32(what + "'s length")
	if d.err == nil && uint64(n) > uint64(len(d.b)-d.off) {
		d.fail("%s of %d bytes, %d are left: truncated", what, n, len(d.b)-d.off)
		return ""
	}
	return string(d.take(int(n), what))
}

func (d *metaDecoder) flag(what string) bool {
	at := d.off
	v := d.u8(what)
	if v > 1 && d.err == nil {
		d.off = at
		d.fail("%s is %d: want 0 or 1", what, v)
	}
	return v == 1
}

// check records a failed consistency check at the current offset.
func (d *metaDecoder) check(ok bool, format string, args ...any) {
	if !ok {
		d.fail(format, args...)
	}
}

// decodePartMeta parses PartMetaFile. Every error wraps ErrPart and
// gives the byte offset where the content stops making sense.
func decodePartMeta(b []byte) (*partMeta, error) {
	body, err := partMetaBody(b)
	if err != nil {
		return nil, err
	}
	d := &metaDecoder{b: body, off: len(partMagic) + 4}
	m := &partMeta{}
	d.summary(m)
	d.files(m)
	d.edges(m)
	if d.err == nil {
		d.checkEdges(m)
	}
	if d.flag("in place") {
		d.placement(m)
	}
	d.check(d.off == len(body), "%d bytes after the description", len(body)-d.off)
	if d.err != nil {
		return nil, d.err
	}
	return m, nil
}

// partMetaBody checks the magic, the version and the trailing CRC-32 of
// PartMetaFile before any field is read, so that a foreign or corrupt file
// is named as such rather than by its first odd field. It returns the
// content without the CRC.
func partMetaBody(b []byte) ([]byte, error) {
	if len(b) < len(partMagic)+4+4 || string(b[:len(partMagic)]) != partMagic {
		return nil, fmt.Errorf("offset 0: no %q magic: not an SCDL part: %w", partMagic, ErrPart)
	}
	if v := binary.LittleEndian.Uint32(b[len(partMagic):]); v != PartFormatVersion {
		return nil, fmt.Errorf("offset %d: part format version %d; this build reads version %d: %w", len(partMagic), v, PartFormatVersion, ErrPart)
	}
	body := b[:len(b)-4]
	if sum, want := binary.LittleEndian.Uint32(b[len(body):]), crc32.ChecksumIEEE(body); sum != want {
		return nil, fmt.Errorf("offset %d: CRC-32 %08x, the content gives %08x: corrupt: %w", len(body), sum, want, ErrPart)
	}
	return body, nil
}

// summary reads the part's counts and dtypes, and checks that they agree
// with one another: whole cells need numeric values and unsigned gene
// indices, and a part without whole cells carries no values.
func (d *metaDecoder) summary(m *partMeta) {
	shards := d.u32("shard count")
	d.check(shards <= math.MaxInt32, "%d shards", shards)
	m.shards = int(shards)
	m.source = d.str("source name")
	m.members = d.u64("member rows")
	m.firstCell = d.str("first member")
	m.cells = d.u64("whole cells")
	m.firstRow = int64(d.u64("first whole row"))
	m.nnz = d.u64("values")
	m.dataDT = DType(d.u32("data dtype"))
	m.dataWhere = d.str("first values")
	m.colDT = DType(d.u32("col dtype"))
	m.anyGene = d.flag("any gene")
	m.maxGene = d.u64("largest gene")
	m.nGenes = d.u64("largest n_genes")
	if m.cells > 0 {
		d.check(m.dataDT.Numeric() && m.colDT.Unsigned(), "whole cells of dtypes %v and %v: want a numeric one and an unsigned one", m.dataDT, m.colDT)
		d.check(m.firstRow > 0 && m.firstRow <= math.MaxInt64-int64(min(m.cells, math.MaxInt64)), "whole cells start at row %d", m.firstRow)
		d.check(m.cells < maxPartElems && m.nnz < maxPartElems, "%d whole cells of %d values", m.cells, m.nnz)
	} else {
		d.check(m.nnz == 0 && m.dataDT == 0 && m.colDT == 0 && !m.anyGene, "no whole cells, yet %d values of dtypes %v and %v", m.nnz, m.dataDT, m.colDT)
	}
	d.check(m.cells <= m.members, "%d whole cells of %d member rows", m.cells, m.members)
}

// files reads the list of files the part wrote.
func (d *metaDecoder) files(m *partMeta) {
	nf := d.u32("file count")
	// Each file takes at least 16 bytes: refuse a count the rest cannot hold
	// before allocating for it.
	d.check(uint64(nf)*16 <= uint64(len(d.b)-d.off), "%d files in %d bytes", nf, len(d.b)-d.off)
	if d.err == nil {
		m.files = make([]partFile, 0, nf)
	}
	for i := 0; i < int(nf) && d.err == nil; i++ {
		var f partFile
		f.name = []byte(d.str("file name"))
		size := d.u64("file size")
		f.where = d.str("file origin")
		d.check(len(f.name) > 0, "file %d has no name", i)
		d.check(size <= math.MaxInt64, "file %d of %d bytes", i, size)
		f.size = int64(size)
		m.files = append(m.files, f)
	}
}

// edges reads the (at most two) edge cells, whose members' bytes follow
// one another in the edges file from offset 0.
func (d *metaDecoder) edges(m *partMeta) {
	ne := d.u8("edge count")
	d.check(ne <= 2, "%d edge cells: a part has at most 2", ne)
	var at int64
	for i := 0; i < int(ne) && d.err == nil; i++ {
		m.edges = append(m.edges, d.edge(&at))
	}
	m.edgesBytes = at
}

// edge reads one edge cell: each kind of member at most once, with the
// size its elements need, its bytes at *at, which it moves past them.
func (d *metaDecoder) edge(at *int64) edgeCell {
	var e edgeCell
	e.row = int64(d.u64("edge row"))
	nm := d.u8("member count")
	d.check(e.row >= 0, "edge cell at row %d", e.row)
	d.check(nm >= 1 && nm <= 3, "edge cell %d of %d members", e.row, nm)
	var seen [3]bool
	for j := 0; j < int(nm) && d.err == nil; j++ {
		x, off, size, k := d.edgeMember()
		if d.err != nil {
			break
		}
		d.check(!seen[k], "cell %d has two members of kind %q", e.row, x.kind)
		seen[k] = true
		d.check(x.kind == 'j' || x.nGenes == -1, "n_genes %d for a %q member", x.nGenes, x.kind)
		d.check(x.n < maxPartElems && size == x.n*uint64(x.dtype.ItemSize()), "%d bytes for %d elements of %v", size, x.n, x.dtype)
		d.check(off == uint64(*at), "member bytes at %d, the previous ones end at %d", off, *at)
		x.off, x.size = int64(off), int64(size)
		*at += x.size
		e.members = append(e.members, x)
	}
	return e
}

// edgeMember reads one member of an edge cell, with its offset and size
// as written, and checks its dtype against its kind; k is the kind's slot
// (0 values, 1 gene indices, 2 .json), meaningful only while d.err is nil.
func (d *metaDecoder) edgeMember() (x edgeMember, off, size uint64, k int) {
	x.kind = d.u8("member kind")
	x.dtype = DType(d.u32("member dtype"))
	x.signed = d.flag("member signedness")
	x.n = d.u64("member elements")
	x.nGenes = int64(d.u64("member n_genes"))
	off, size = d.u64("member offset"), d.u64("member size")
	x.where = d.str("member origin")
	k = -1
	switch x.kind {
	case 'v':
		d.check(x.dtype.Numeric() && !x.signed, "values of dtype %v", x.dtype)
		k = 0
	case 'g':
		d.check(x.dtype.Unsigned(), "gene indices of dtype %v", x.dtype)
		k = 1
	case 'j':
		d.check(x.dtype == 0 && x.n == 0 && !x.signed, "a .json member with elements")
		k = 2
	default:
		d.check(false, "member kind %q", x.kind)
	}
	return x, off, size, k
}

// checkEdges checks that the edge cells sit where the whole cells say:
// the head is the cell before the whole cells, the tail the one after
// (the part's cells are consecutive rows), and that the member rows hold
// them all.
func (d *metaDecoder) checkEdges(m *partMeta) {
	switch {
	case m.cells > 0:
		d.check(len(m.edges) == 2 && m.edges[0].row == m.firstRow-1 && m.edges[1].row == m.firstRow+int64(m.cells),
			"whole cells %d to %d need edge cells %d and %d", m.firstRow, m.firstRow+int64(m.cells)-1, m.firstRow-1, m.firstRow+int64(m.cells))
	case len(m.edges) == 2:
		d.check(m.edges[0].row < math.MaxInt64 && m.edges[1].row == m.edges[0].row+1, "edge cells %d and %d are not consecutive", m.edges[0].row, m.edges[1].row)
	}
	var n uint64
	for _, e := range m.edges {
		n += uint64(len(e.members))
	}
	d.check(n+m.cells*2 <= m.members, "%d member rows hold %d whole cells and %d edge members", m.members, m.cells, n)
}

// placement reads where a part written in place put its whole cells, and
// checks that they lie inside the run's files, in the files' dtypes.
func (d *metaDecoder) placement(m *partMeta) {
	pl := &placement{}
	pl.dataDT = DType(d.u32("run data dtype"))
	pl.colDT = DType(d.u32("run col dtype"))
	pl.total = d.u64("run values")
	pl.first = d.u64("first whole value")
	pl.data = d.str("run data file")
	pl.col = d.str("run col file")
	if d.err != nil {
		return
	}
	if pl.valuesOnly() {
		d.check(pl.dataDT.Numeric() || pl.dataDT == 0 && m.cells == 0, "run values of dtype %v", pl.dataDT)
		d.check(pl.total == 0 && pl.col == "", "values placed alone, yet a run of %d values and a col file %q", pl.total, pl.col)
		d.check(pl.first < maxPartElems, "values at value %d", pl.first)
		d.check(m.cells == 0 || m.dataDT == pl.dataDT, "whole cells of dtype %v in a run file of %v", m.dataDT, pl.dataDT)
		d.check(pl.data != "", "the run's data file is not named")
		m.place = pl
		return
	}
	d.check(pl.dataDT.Numeric() && pl.colDT.Unsigned(), "run arrays of dtypes %v and %v: want a numeric one and an unsigned one", pl.dataDT, pl.colDT)
	d.check(pl.total < maxPartElems && pl.first <= pl.total && m.nnz <= pl.total-pl.first,
		"%d values at value %d, past the run's %d", m.nnz, pl.first, pl.total)
	d.check(m.cells == 0 || m.dataDT == pl.dataDT && m.colDT == pl.colDT,
		"whole cells of dtypes %v and %v in run files of %v and %v", m.dataDT, m.colDT, pl.dataDT, pl.colDT)
	d.check(pl.data != "" && pl.col != "", "the run's files are not named")
	m.place = pl
}
