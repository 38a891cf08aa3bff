package scdl

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// A partitioned run may write an archive's values and gene indices in
// place: where the dataset carries the archive's header.sch (cells with
// the files beside them), the header fixes the arrays' dtypes and length,
// so every task can write its whole cells straight into two files that
// all the tasks of the run share (the run's data and col files), where
// data.npy and col_ptr.npy have them. A task finds where its share
// starts by counting the values of the cells in the shards before its
// own, reading only each values member's NPY header, or from the records
// the run's other tasks left (records.go): tasks run one wave after
// another count only the shards of the tasks of their own wave. The part
// then holds the two files as hard links (data.bin, col.bin) and records
// the value offset of its first whole cell; its edge cells and row ends
// are kept as a part of WritePart keeps them. MergeParts writes the edge cells' values
// and gene indices into the files, row_ptr.npy from the row ends, and
// makes the files the archive's arrays: no payload byte is copied. The
// run's names of the files are removed once merged, so that a task run
// again cannot write into the archive.
//
// The command's tasks write WritePart's parts, which the merge copies: a
// job array starts its tasks at once, where each would count every shard
// before its own (4 tasks of 200k cells from a Barecat archive, started
// together on 2 cores: 1.9 s against 0.9 s, for a merge of 0.03 s
// against 0.15 s).
//
// A fresh archive (cells alone) takes its col_ptr dtype from the largest
// gene index of every cell, which no task knows before the others have
// read theirs: there the values alone are placed (their dtype is the
// cells' own, the file as long as they reach), each part keeps its gene
// indices in col.bin as WritePart does, and the merge copies or converts
// those.

// maxHeaderFile bounds the header.sch a task reads to place its cells: it
// holds a few arrays' and feature indices' descriptions.
const maxHeaderFile = 1 << 20

// runFiles are the run's array files a task writes its whole cells into.
type runFiles struct {
	dataDT, colDT     DType
	total             uint64 // the header's values: the files' length in elements
	base              uint64 // values of the cells' members before the task's shards
	dataName, colName string
	data, col         *os.File
}

// WriteRange writes the part of a partitioned run's task that converts
// shards lo..hi-1 of the dataset newSource makes (the whole dataset, in
// every pass) into dir, an empty directory the caller made. The task's
// whole cells go in place into the run's array files in dataDir (a
// directory on the file system of the output and of dir, the same for
// every task of the run), named after a digest of the dataset's shards
// and header: values and gene indices where the dataset carries the
// archive's header.sch, the values alone otherwise. Where dataDir cannot
// be linked from dir, it writes the part WritePart writes over those
// shards. MergeParts merges either kind (not both in one merge). The
// tasks of one run must be given the same dataset and dataDir. A task
// that fails leaves the run's files for the others (the merge, or its
// run again, takes them).
func WriteRange(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), lo, hi int, dir, dataDir string, opts RowsOptions) (*PartStats, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("SCDL part: %w", err)
	}
	if len(ents) > 0 {
		return nil, fmt.Errorf("SCDL part %s: the directory is not empty (%s)", dir, ents[0].Name())
	}
	share := func(counting bool) (dataset.PayloadSource, error) {
		src, err := newSource(counting)
		if err != nil {
			return nil, err
		}
		part, err := dataset.Slice(src, lo, hi)
		if err != nil {
			registry.CloseSource(src)
			return nil, err
		}
		return part, nil
	}
	c, err := countBefore(ctx, newSource, lo, dataDir, opts)
	if err != nil {
		return nil, err
	}
	run := c.runFiles()
	if err := run.open(dataDir, c.layout()); err != nil {
		return nil, fmt.Errorf("SCDL part %s: %w", dir, err)
	}
	defer run.close()
	st, own, err := writePlaced(ctx, share, dir, opts, run, run.colDT)
	if errors.Is(err, errWiden) {
		// Values placed alone, the part's gene indices in dtypes of
		// several widths: as WritePart, a first pass finds the widest.
		clearPart(dir)
		var dt DType
		if dt, err = partGeneDType(ctx, share, opts); err == nil {
			st, own, err = writePlaced(ctx, share, dir, opts, run, dt)
			if st != nil {
				st.Passes = 2
			}
		}
	}
	if errors.Is(err, errNoLink) {
		// dataDir on another file system than the part: a part of its
		// own, which the merge copies.
		clearPart(dir)
		return WritePart(ctx, share, dir, opts)
	}
	if err != nil {
		clearPart(dir)
		return nil, err
	}
	// The values of the task's own shards: a later task of the run need
	// not count them.
	c.recs.putValues(lo, hi, own)
	return st, nil
}

// errNoLink: the run's files cannot be linked into the part directory.
var errNoLink = errors.New("the run's files cannot be linked into the part")

// writePlaced is writePart with the whole cells in the run's files, which
// dir holds as links: their values, and where the header fixes its dtype
// (geneDT is run.colDT) their gene indices; otherwise these go to col.bin
// in geneDT (0: the first whole cell's). It also returns the values of
// the cells' members in the shards it read.
func writePlaced(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), dir string, opts RowsOptions, run *runFiles, geneDT DType) (*PartStats, uint64, error) {
	links := []struct{ from, to string }{{run.dataName, partDataFile}, {run.colName, partColFile}}
	if run.valuesOnly() {
		links = links[:1]
	}
	for _, l := range links {
		if err := os.Link(l.from, filepath.Join(dir, l.to)); err != nil {
			return nil, 0, errNoLink
		}
	}
	s := &partSink{o: &outDir{final: dir, tmp: dir}, geneDT: geneDT, run: run}
	s.meta.place = &placement{dataDT: run.dataDT, colDT: run.colDT, total: run.total, data: run.dataName, col: run.colName}
	s.copier.arrays = true
	defer s.close()
	// The whole cells' writers into the run's files are made at the first
	// one, once its offset is known (placeCell); until then nothing is
	// written to them.
	s.bufs[0], s.bufs[1] = &bufWriter{w: io.Discard}, &bufWriter{w: io.Discard}
	names := []string{partRowEndFile, partEdgeFile}
	if run.valuesOnly() {
		names = append(names, partColFile)
	}
	for i, name := range names {
		f, err := s.o.create(name)
		if err != nil {
			return nil, 0, fmt.Errorf("SCDL part %s: %w", dir, err)
		}
		k := []int{2, 3, 1}[i]
		s.files[k], s.bufs[k] = f, newBufWriter(f)
	}
	s.asm.done = s.addCell
	if err := runPass(ctx, newSource, false, s, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return nil, 0, err
	}
	if err := s.finish(); err != nil {
		return nil, 0, fmt.Errorf("SCDL part %s: %w", dir, err)
	}
	for _, f := range []*os.File{run.data, run.col} {
		if f == nil {
			continue
		}
		if err := f.Sync(); err != nil {
			return nil, 0, fmt.Errorf("SCDL part %s: %w", dir, err)
		}
	}
	m := &s.meta
	return &PartStats{Dir: dir, Shards: m.shards, Members: int64(m.members), WholeCells: int64(m.cells), EdgeCells: len(m.edges),
		NNZ: m.nnz, Files: len(m.files), GeneDType: m.colDT, Passes: 1, Bytes: s.bytes, InPlace: true}, s.shardV, nil
}

// placeCell checks a whole cell against the run's files before addCell
// writes it, and at the first one points the writers at its offset: the
// values before the task's shards and those of the head's members here.
func (s *partSink) placeCell(v *cellPart) error {
	run, m := s.run, &s.meta
	if run.valuesOnly() {
		// The first whole cell's values give the dtype (addCell checks
		// the others against it).
		if m.cells == 0 {
			m.place.dataDT = v.dtype
			m.place.first = run.base + s.headV
			s.bufs[0] = newBufWriter(io.NewOffsetWriter(syswrite.File{File: run.data}, int64(m.place.first)*int64(v.dtype.ItemSize())))
		}
		return nil
	}
	if v.dtype != run.dataDT {
		return fmt.Errorf("%s: values of dtype %v, but the archive's data dtype is %v", v.where(), v.dtype, run.dataDT)
	}
	if m.cells == 0 {
		first := run.base + s.headV
		if first > run.total {
			return fmt.Errorf("%s: cell %d starts at value %d, past the %d values %s%s describes", v.where(), v.row, first, run.total, MetaPrefix, HeaderFile)
		}
		m.place.first = first
		s.bufs[0] = newBufWriter(io.NewOffsetWriter(syswrite.File{File: run.data}, int64(first)*int64(run.dataDT.ItemSize())))
		s.bufs[1] = newBufWriter(io.NewOffsetWriter(syswrite.File{File: run.col}, int64(first)*int64(run.colDT.ItemSize())))
	}
	if end := m.place.first + m.nnz + uint64(v.n); end > run.total {
		return fmt.Errorf("%s: cell %d ends at value %d, past the %d values %s%s describes", v.where(), v.row, end, run.total, MetaPrefix, HeaderFile)
	}
	return nil
}

// valuesOnly: no header fixes the arrays: the values alone are placed.
func (run *runFiles) valuesOnly() bool { return run.colDT == 0 }

// open creates (or opens: another task may have) the run's files in dir,
// as long as the header says, and opens them for the task's writes.
func (run *runFiles) open(dir, layout string) error {
	// "shared-": the prefix package partition gives the files a run's
	// tasks share in its parts directory, removed once no part needs them.
	run.dataName = filepath.Join(dir, "shared-scdl-"+layout+".data")
	var err error
	if run.data, err = openRunFile(run.dataName, run.total, run.dataDT); err != nil {
		return err
	}
	if run.valuesOnly() {
		return nil
	}
	run.colName = filepath.Join(dir, "shared-scdl-"+layout+".col")
	if run.col, err = openRunFile(run.colName, run.total, run.colDT); err != nil {
		run.close()
		return err
	}
	return nil
}

// openRunFile opens a run's file, creating it where no task has yet.
// Where the header gives the length (dt is not 0), every task sets it, so
// that a task's writes never find the file shorter than another's; the
// values placed alone make the file as long as they reach, and the merge
// cuts it to the archive's length.
func openRunFile(name string, total uint64, dt DType) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if dt == 0 {
		return f, nil
	}
	if err := f.Truncate(int64(total) * int64(dt.ItemSize())); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// close closes what the part's sink did not.
func (run *runFiles) close() {
	for _, f := range []**os.File{&run.data, &run.col} {
		if *f != nil {
			(*f).Close()
			*f = nil
		}
	}
}

// countBefore is a task's first pass: the values of the cells' members
// in the shards before the task's, and the header, looked for there, then
// in the shards from the task's on until it is found. What other tasks of
// the run counted is read from the records they left in dataDir (their
// own shards, and those they counted before theirs): the task counts only
// the shards before its own that no record covers, and records them in
// turn. Tasks run in waves then count at most the shards of the tasks
// running beside them, whatever the number of tasks.
func countBefore(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), lo int, dataDir string, opts RowsOptions) (*countSink, error) {
	c := &countSink{}
	src, err := newSource(true)
	if err != nil {
		return nil, err
	}
	c.shards, c.sizes = make([]string, src.NumShards()), dataset.ShardSizes(src)
	for i := range c.shards {
		c.shards[i] = src.ShardName(i)
	}
	registry.CloseSource(src)
	if lo > len(c.shards) {
		return nil, fmt.Errorf("SCDL part: shards from %d of %d", lo, len(c.shards))
	}
	c.recs = openRecords(dataDir, c.datasetKey())
	from, before := c.recs.chain(lo)
	shards := func(lo, hi int) func(bool) (dataset.PayloadSource, error) {
		return func(counting bool) (dataset.PayloadSource, error) {
			src, err := newSource(counting)
			if err != nil {
				return nil, err
			}
			part, err := dataset.Slice(src, lo, hi)
			if err != nil {
				registry.CloseSource(src)
				return nil, err
			}
			return part, nil
		}
	}
	if from < lo {
		// The rows with their bytes: a values member's header is in the
		// batch, not read again member by member.
		if err := runPass(ctx, shards(from, lo), false, c, dataset.Options{Workers: opts.Workers}); err != nil {
			return nil, err
		}
		c.recs.putValues(from, lo, c.values)
	}
	c.values += before
	if c.header == nil {
		c.header, c.searched = c.recs.header()
	}
	if c.header != nil || c.searched {
		return c, nil
	}
	// Where the layouts put it first: in the task's first shard (the
	// files beside the cells first, as this package writes them), then
	// in the last (rows sorted by path, scdlmeta/ after the cells'
	// digits), then in those between, so that a task seldom lists the
	// shards after its own; last in those before it that records
	// covered.
	c.headerOnly = true
	n := len(c.shards)
	for _, r := range [][2]int{{lo, min(lo+1, n)}, {max(n-1, lo+1), n}, {lo + 1, n - 1}, {0, from}} {
		if r[0] >= r[1] {
			continue
		}
		err := runPass(ctx, shards(r[0], r[1]), true, c, dataset.Options{Workers: opts.Workers})
		if errors.Is(err, errHeaderFound) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	c.recs.putHeader(c.header)
	return c, nil
}

// errHeaderFound stops the search for the header.
var errHeaderFound = errors.New("the header is found")

// countSink is countBefore's sink: it counts the values of the cells'
// members and keeps the header, or (headerOnly) looks for the header
// alone and stops there.
type countSink struct {
	src        dataset.PayloadSource
	headerOnly bool
	header     []byte
	searched   bool     // a record says the dataset has no header
	shards     []string // the whole dataset's
	sizes      []int64
	values     uint64
	recs       *records
}

func (c *countSink) use(src dataset.PayloadSource) { c.src = src }

func (c *countSink) EndShard(int) error { return nil }

// Prepare reads, on the workers, the NPY headers of the values members:
// their element counts.
func (c *countSink) Prepare(b *dataset.Batch) error {
	if c.headerOnly {
		return nil
	}
	var n uint64
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile {
			continue
		}
		if _, part, ok := cellsName(trimDot(r.Name)); !ok || part != 'v' {
			continue
		}
		k, err := c.valuesOf(b.Shard, r)
		if err != nil {
			return err
		}
		n += k
	}
	b.Prep = n
	return nil
}

func (c *countSink) Write(b *dataset.Batch) error {
	if n, ok := b.Prep.(uint64); ok {
		c.values += n
	}
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile || string(trimDot(r.Name)) != MetaPrefix+HeaderFile || c.header != nil {
			continue
		}
		if r.Size > maxHeaderFile {
			return fmt.Errorf("%s: %d bytes, more than a header is made of", refOf(c.src, b.Shard, r), r.Size)
		}
		h, err := dataset.ReadPayload(c.src, r)
		if err != nil {
			return fmt.Errorf("%s: %w", refOf(c.src, b.Shard, r), err)
		}
		c.header = h
		if c.headerOnly {
			return errHeaderFound
		}
	}
	return nil
}

// valuesOf reads a values member's element count from its NPY header.
func (c *countSink) valuesOf(shard int, r *dataset.Row) (uint64, error) {
	ref := refOf(c.src, shard, r)
	b := r.Inline
	if b == nil {
		rd, err := c.src.OpenPayload(r)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", ref, err)
		}
		if cl, ok := rd.(io.Closer); ok {
			defer cl.Close()
		}
		// The preamble says how long the header is; read that much.
		pre := make([]byte, 12)
		k, err := io.ReadFull(rd, pre)
		if k < 10 {
			return 0, fmt.Errorf("%s: %w", ref, cmpErr(err, io.ErrUnexpectedEOF))
		}
		hlen := int64(binary.LittleEndian.Uint16(pre[8:])) + 10
		if pre[6] >= 2 {
			hlen = int64(binary.LittleEndian.Uint32(pre[8:])) + 12
		}
		if hlen > maxHeaderFile || hlen > r.Size {
			return 0, fmt.Errorf("%s: an NPY header of %d bytes in a member of %d", ref, hlen, r.Size)
		}
		b = make([]byte, hlen)
		copy(b, pre[:k])
		if _, err := io.ReadFull(rd, b[k:]); err != nil {
			return 0, fmt.Errorf("%s: %w", ref, err)
		}
	}
	h, err := ParseNPYHeader(b)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", ref, err)
	}
	if len(h.Shape) != 1 {
		return 0, fmt.Errorf("%s: shape %v: want a 1-D array", ref, h.Shape)
	}
	return uint64(h.Shape[0]), nil
}

func cmpErr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// runFiles are the files the header fixes, or the values' file alone
// where the dataset has no header (or one the merge will refuse).
func (c *countSink) runFiles() *runFiles {
	run := &runFiles{base: c.values}
	if c.header == nil {
		return run
	}
	h, err := DecodeHeader(c.header)
	if err != nil {
		return run
	}
	for _, a := range h.Arrays {
		switch a.Name {
		case ArrayData:
			run.dataDT, run.total = a.DType, a.Length
		case ArrayColPtr:
			run.colDT = a.DType
		}
	}
	if !run.dataDT.Numeric() || !run.colDT.Unsigned() || run.total >= maxPartElems {
		return &runFiles{base: c.values}
	}
	return run
}

// datasetKey names what the run's tasks share of one dataset before its
// header is known: a digest of its shards, the same for every task.
func (c *countSink) datasetKey() string {
	return hex.EncodeToString(c.shardsDigest().Sum(nil)[:12])
}

// layout names the run's files: a digest of the dataset's shards and
// header, the same for every task of the run.
func (c *countSink) layout() string {
	h := c.shardsDigest()
	h.Write([]byte{0})
	h.Write(c.header)
	return hex.EncodeToString(h.Sum(nil)[:12])
}

func (c *countSink) shardsDigest() hash.Hash {
	h := sha256.New()
	h.Write([]byte(strconv.Itoa(len(c.shards))))
	for i, s := range c.shards {
		h.Write([]byte{0})
		h.Write([]byte(s))
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(c.sizes[i])))
	}
	return h
}

// errMixedParts: parts written in place beside parts that were not.
var errMixedParts = errors.New("parts written in place beside parts that were not")
