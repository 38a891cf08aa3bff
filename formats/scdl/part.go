package scdl

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/itarconv/itarconv/dataset"
)

// A partitioned run writes an archive as N tasks, each over a contiguous
// share of the source's shards, then joins their parts with MergeParts.
//
// A part is a directory:
//
//	scdlpart.meta  what the part's rows contribute (partMeta), written last
//	data.bin       the values of its whole cells, as in data.npy
//	col.bin        their gene indices, in the dtype the part chose
//	rowend.bin     each whole cell's end in data.bin (uint64, in values)
//	edges.bin      the members of its first and last cells, as parsed
//	files/<n>      every other file (scdlmeta/ or not), numbered in order
//
// A task cannot know what WriteRows decides from the whole dataset: whether
// it writes cells mode, a fresh archive or archive mode, the header's
// dtypes, the row numbers its cells start at, whether its first and last
// cells are whole. So a part writes what its rows contribute and MergeParts
// decides. The values are written as they come (an archive has one data
// dtype); the gene indices in the dtype of the part's first whole cell,
// which is the archive's col_ptr dtype whenever the cells come from an
// archive, so that the merge copies them unchanged; the row offsets as
// uint64 from the part's start, which the merge shifts and narrows.

// PartStats describes a part WritePart wrote.
type PartStats struct {
	Dir    string `json:"dir"`
	Shards int    `json:"shards"`
	// Members are the cells' member rows; WholeCells the cells written to
	// the part's arrays, of NNZ values; EdgeCells the first and last cells,
	// kept as parsed members because the neighbouring parts may hold the
	// rest of them.
	Members    int64  `json:"members"`
	WholeCells int64  `json:"whole_cells"`
	EdgeCells  int    `json:"edge_cells"`
	NNZ        uint64 `json:"nnz"`
	Files      int    `json:"files"` // files beside the cells
	// GeneDType is the dtype of the part's gene indices (0 without whole
	// cells); Passes is 2 when a cell's genes did not fit the first cell's
	// dtype, so that a first pass had to find the widest.
	GeneDType DType `json:"gene_dtype"`
	Passes    int   `json:"passes"`
	Bytes     int64 `json:"bytes"` // written into the part
	// InPlace: the whole cells went into the run's array files
	// (WriteRange), which the part holds as links.
	InPlace bool `json:"in_place,omitempty"`
}

// errWiden: a whole cell's gene indices do not fit the dtype the part
// took from its first whole cell.
var errWiden = errors.New("gene indices wider than the part's first cell's")

// WritePart writes one task's part of a partitioned run into dir, an
// empty directory the caller made: what MergeParts needs to join this
// task's rows (a contiguous share of the whole dataset's rows, in order)
// with the other tasks' into exactly what WriteRows writes over all rows.
// newSource makes the task's source (its share, as dataset.Slice gives it);
// it is called with counting false (the rows carry their bytes), twice
// when the part's gene indices come in dtypes of several widths. On error
// the files it wrote are removed.
func WritePart(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), dir string, opts RowsOptions) (*PartStats, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("SCDL part: %w", err)
	}
	if len(ents) > 0 {
		return nil, fmt.Errorf("SCDL part %s: the directory is not empty (%s)", dir, ents[0].Name())
	}
	st, err := writePart(ctx, newSource, dir, opts, 0)
	if errors.Is(err, errWiden) {
		clearPart(dir)
		var dt DType
		if dt, err = partGeneDType(ctx, newSource, opts); err == nil {
			st, err = writePart(ctx, newSource, dir, opts, dt)
			if st != nil {
				st.Passes = 2
			}
		}
	}
	if err != nil {
		clearPart(dir)
		return nil, err
	}
	return st, nil
}

// clearPart removes what WritePart writes in dir.
func clearPart(dir string) {
	for _, f := range []string{PartMetaFile, partDataFile, partColFile, partRowEndFile, partEdgeFile, partFilesDir} {
		os.RemoveAll(filepath.Join(dir, f))
	}
}

// writePart is one attempt: geneDT is the dtype of col.bin, or 0 to take
// the first whole cell's.
func writePart(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), dir string, opts RowsOptions, geneDT DType) (*PartStats, error) {
	s := &partSink{o: &outDir{final: dir, tmp: dir}, geneDT: geneDT}
	s.copier.arrays = true // files/<n> are never an archive's arrays
	defer s.close()
	for i, name := range []string{partDataFile, partColFile, partRowEndFile, partEdgeFile} {
		f, err := s.o.create(name)
		if err != nil {
			return nil, fmt.Errorf("SCDL part %s: %w", dir, err)
		}
		s.files[i], s.bufs[i] = f, newBufWriter(f)
	}
	s.asm.done = s.addCell
	if err := runPass(ctx, newSource, false, s, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	if err := s.finish(); err != nil {
		return nil, fmt.Errorf("SCDL part %s: %w", dir, err)
	}
	m := &s.meta
	st := &PartStats{Dir: dir, Shards: m.shards, Members: int64(m.members), WholeCells: int64(m.cells), EdgeCells: len(m.edges),
		NNZ: m.nnz, Files: len(m.files), GeneDType: m.colDT, Passes: 1, Bytes: s.bytes}
	return st, nil
}

// partSink writes a part: files as they come, whole cells into the
// arrays, edge cells' members into edges.bin.
type partSink struct {
	o      *outDir // the part directory (not renamed: the caller places it)
	src    dataset.PayloadSource
	copier fileCopier
	meta   partMeta
	geneDT DType // col.bin's dtype; 0 until the first whole cell

	files [4]*os.File   // data, col, rowend, edges
	bufs  [4]*bufWriter // over them
	bytes int64

	started    bool // a member was seen: the head's row is known
	headClosed bool // a member of a later row was seen
	asm        cellAssembler
	scratch    []byte

	// In place (WriteRange): the run's files the whole cells go into, and
	// the values of the head's members seen here, which come before them.
	run   *runFiles
	headV uint64
	// shardV counts the values of every cell's member read, for the
	// run's records (WriteRange).
	shardV uint64
}

func (s *partSink) use(src dataset.PayloadSource) {
	s.src, s.copier.src = src, src
	s.meta.shards = src.NumShards()
	if s.meta.shards > 0 {
		s.meta.source = src.ShardName(0)
	}
}

func (s *partSink) Prepare(b *dataset.Batch) error { return prepareCellParts(s.src, b) }
func (s *partSink) EndShard(int) error             { return nil }

// prepareCellParts parses, on the workers, the cells' members whose bytes
// the rows carry (a sink's Prepare, for WriteRows and WritePart alike).
func prepareCellParts(src dataset.Source, b *dataset.Batch) error {
	var parts []cellPart
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile || r.Inline == nil {
			continue
		}
		row, part, ok := cellsName(trimDot(r.Name))
		if !ok {
			continue
		}
		if parts == nil {
			parts = make([]cellPart, len(b.Rows))
		}
		parts[i].err = parseCellPart(&parts[i], row, part, r.Inline, refOf(src, b.Shard, r))
	}
	b.Prep = parts
	return nil
}

// cellPartOf returns row i of the batch parsed: from Prepare, or read
// through OpenPayload and parsed here.
func cellPartOf(src dataset.PayloadSource, b *dataset.Batch, i int, row int64, part byte, ref rowRef) (*cellPart, error) {
	if parts, _ := b.Prep.([]cellPart); parts != nil && parts[i].part != 0 {
		if parts[i].err != nil {
			return nil, parts[i].err
		}
		return &parts[i], nil
	}
	data, err := dataset.ReadPayload(src, &b.Rows[i])
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref, err)
	}
	p := new(cellPart)
	if err := parseCellPart(p, row, part, data, ref); err != nil {
		return nil, err
	}
	return p, nil
}

func (s *partSink) Write(b *dataset.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		ref, name, skip, err := fileRow(s.src, b.Shard, r)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		row, part, isCell := cellsName(name)
		if !isCell {
			if err := s.addFile(name, r, ref); err != nil {
				return err
			}
			continue
		}
		if s.meta.members++; s.meta.members == 1 {
			s.meta.firstCell = ref.String()
		}
		p, err := cellPartOf(s.src, b, i, row, part, ref)
		if err != nil {
			return err
		}
		if p.part == 'v' {
			s.shardV += uint64(p.n)
		}
		if err := s.addMember(p); err != nil {
			return err
		}
	}
	// The pending cell outlives this batch, whose bytes are released next.
	s.asm.keep()
	return nil
}

// addFile copies a file beside the cells as files/<n>.
func (s *partSink) addFile(name []byte, r *dataset.Row, ref rowRef) error {
	rel := partFilesDir + "/" + strconv.Itoa(len(s.meta.files))
	if err := s.copier.copy(s.o, rel, r, ref); err != nil {
		return err
	}
	s.meta.files = append(s.meta.files, partFile{name: append([]byte(nil), name...), size: r.Size, where: ref.String()})
	s.bytes += r.Size
	return nil
}

// addMember takes a cell's member: the head's until a later row comes,
// then the assembler's, which writes whole cells as the next one starts.
func (s *partSink) addMember(p *cellPart) error {
	if !s.started {
		s.started = true
		s.meta.edges = append(s.meta.edges, edgeCell{row: p.row})
	}
	if !s.headClosed {
		head := &s.meta.edges[0]
		if p.row == head.row {
			return s.addEdgeMember(head, p)
		}
		s.headClosed = true
		s.asm.next = head.row + 1
	}
	return s.asm.add(p)
}

// addEdgeMember writes an edge cell's member to edges.bin.
func (s *partSink) addEdgeMember(e *edgeCell, p *cellPart) error {
	for _, x := range e.members {
		if x.kind == p.part {
			return fmt.Errorf("%s: a second member of this kind for cell %d", p.where(), p.row)
		}
	}
	x := edgeMember{kind: p.part, dtype: p.dtype, signed: p.signed, n: uint64(p.n), nGenes: -1, off: s.meta.edgesBytes, where: p.where()}
	if p.part == 'v' && !s.headClosed {
		s.headV = x.n
	}
	switch p.part {
	case 'j':
		x.nGenes = int64(p.nGenes)
	default:
		x.size = int64(len(p.data))
		s.bufs[3].write(p.data)
	}
	s.meta.edgesBytes += x.size
	s.bytes += x.size
	e.members = append(e.members, x)
	return nil
}

// addCell writes a whole cell: values as they come, gene indices in the
// part's dtype, its end as uint64.
func (s *partSink) addCell(v, g, j *cellPart) error {
	m := &s.meta
	if s.run != nil {
		if err := s.placeCell(v); err != nil {
			return err
		}
	}
	if m.cells == 0 {
		m.firstRow, m.dataDT, m.dataWhere = v.row, v.dtype, v.where()
		if s.geneDT == 0 {
			s.geneDT = g.dtype
		}
		m.colDT = s.geneDT
	} else if v.dtype != m.dataDT {
		return fmt.Errorf("%s: values of dtype %v, but %s has %v: an archive has one data dtype", v.where(), v.dtype, m.dataWhere, m.dataDT)
	}
	s.bufs[0].write(v.data)
	var top uint64
	if g.dtype == s.geneDT {
		// Non-negative signed indices have the bytes of unsigned ones.
		top = maxUintIn(g.dtype, g.data)
		if g.signed && top > maxOf(g.dtype)>>1 {
			for i := range g.n {
				if _, err := g.geneAt(i); err != nil {
					return err
				}
			}
		}
		s.bufs[1].write(g.data)
	} else {
		size := s.geneDT.ItemSize()
		if cap(s.scratch) < g.n*size {
			s.scratch = make([]byte, g.n*size)
		}
		out := s.scratch[:g.n*size]
		limit := maxOf(s.geneDT)
		for i := range g.n {
			x, err := g.geneAt(i)
			if err != nil {
				return err
			}
			if x > limit && s.run != nil && !s.run.valuesOnly() {
				return fmt.Errorf("%s: gene index %d does not fit col_ptr's dtype %v (the header's)", g.where(), x, s.geneDT)
			}
			if x > limit {
				return errWiden
			}
			top = max(top, x)
			putUint(s.geneDT, out, i, x)
		}
		s.bufs[1].write(out)
	}
	if g.n > 0 {
		m.maxGene, m.anyGene = max(m.maxGene, top), true
	}
	if j != nil && j.nGenes > 0 {
		m.nGenes = max(m.nGenes, uint64(j.nGenes))
	}
	m.nnz += uint64(v.n)
	m.cells++
	var end [8]byte
	binary.LittleEndian.PutUint64(end[:], m.nnz)
	s.bufs[2].write(end[:])
	s.bytes += int64(len(v.data) + g.n*s.geneDT.ItemSize() + 8)
	return nil
}

// finish keeps the last cell as the tail, closes the files and writes
// PartMetaFile.
func (s *partSink) finish() error {
	if s.headClosed && s.asm.partsPending {
		tail := edgeCell{row: s.asm.cur}
		for _, p := range []*cellPart{s.asm.values, s.asm.genes, s.asm.json} {
			if p != nil {
				if err := s.addEdgeMember(&tail, p); err != nil {
					return err
				}
			}
		}
		s.meta.edges = append(s.meta.edges, tail)
	}
	for i, b := range s.bufs {
		if err := b.flush(); err != nil {
			return err
		}
		f := s.files[i]
		s.files[i] = nil
		if f == nil {
			continue
		}
		if err := closeFile(f); err != nil {
			return err
		}
	}
	f, err := s.o.create(PartMetaFile)
	if err != nil {
		return err
	}
	_, err = f.Write(s.meta.encode())
	if cerr := closeFile(f); err == nil {
		err = cerr
	}
	return err
}

func (s *partSink) close() {
	for i, f := range s.files {
		if f != nil {
			f.Close()
			s.files[i] = nil
		}
	}
}

// partGeneDType is the first pass of a part whose genes come in dtypes of
// several widths: the smallest unsigned dtype that holds every gene index
// of its cells and every n_genes - 1 of their .json members, as a fresh
// archive picks col_ptr's.
func partGeneDType(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), opts RowsOptions) (DType, error) {
	sc := &geneScanSink{}
	if err := runPass(ctx, newSource, false, sc, dataset.Options{Workers: opts.Workers}); err != nil {
		return 0, err
	}
	top := sc.maxGene
	if sc.nGenes > 0 {
		top = max(top, sc.nGenes-1)
	}
	return SmallestUint(top), nil
}

// geneScanSink finds the largest gene index and n_genes of the cells.
type geneScanSink struct {
	src             dataset.PayloadSource
	maxGene, nGenes uint64
}

func (g *geneScanSink) use(src dataset.PayloadSource)  { g.src = src }
func (g *geneScanSink) Prepare(b *dataset.Batch) error { return prepareCellParts(g.src, b) }
func (g *geneScanSink) EndShard(int) error             { return nil }

func (g *geneScanSink) Write(b *dataset.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		ref, name, skip, err := fileRow(g.src, b.Shard, r)
		if err != nil {
			return err
		}
		row, part, isCell := cellsName(name)
		if skip || !isCell || part == 'v' {
			continue
		}
		p, err := cellPartOf(g.src, b, i, row, part, ref)
		if err != nil {
			return err
		}
		if p.part == 'j' {
			if p.nGenes > 0 {
				g.nGenes = max(g.nGenes, uint64(p.nGenes))
			}
			continue
		}
		for k := range p.n {
			x, err := p.geneAt(k)
			if err != nil {
				return err
			}
			g.maxGene = max(g.maxGene, x)
		}
	}
	return nil
}

// maxUintIn is the largest element of a little-endian unsigned array.
func maxUintIn(d DType, b []byte) uint64 {
	var top uint64
	switch d {
	case Uint8:
		for _, v := range b {
			top = max(top, uint64(v))
		}
	case Uint16:
		for i := 0; i+1 < len(b); i += 2 {
			top = max(top, uint64(binary.LittleEndian.Uint16(b[i:])))
		}
	case Uint32:
		for i := 0; i+3 < len(b); i += 4 {
			top = max(top, uint64(binary.LittleEndian.Uint32(b[i:])))
		}
	default:
		for i := 0; i+7 < len(b); i += 8 {
			top = max(top, binary.LittleEndian.Uint64(b[i:]))
		}
	}
	return top
}
