package scdl

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// ErrNotCell: a file beside an archive's cells that is neither a cell's
// member nor one of the archive's other files (under MetaPrefix).
var ErrNotCell = errors.New("not a cell's member (<row>.values.npy, <row>.genes.npy or <row>.json)")

// ErrCellOrder: cells that are not in row order, each cell's members
// together.
var ErrCellOrder = errors.New("cells must come in row order, each member of a cell together")

// RowsOptions tune WriteRows.
type RowsOptions struct {
	// Overwrite replaces an existing directory at the output, once the new
	// archive is complete; without it an existing one is refused.
	Overwrite bool
	Workers   int
	Progress  func(dataset.Progress)
}

// RowsStats describes an archive WriteRows rebuilt.
type RowsStats struct {
	Output string `json:"output"`
	Mode   string `json:"mode"` // cells or archive
	Cells  int    `json:"cells"`
	NNZ    uint64 `json:"nnz"`
	Files  int    `json:"files"`
	// Fresh: no files beside the cells (none under MetaPrefix), so a new
	// header, metadata.json, version.json and a var_features index of one
	// block were written.
	Fresh bool `json:"fresh"`
}

// WriteRows builds an SCDL archive at out (a directory that must not
// exist, unless opts.Overwrite) from any source of rows in one of the
// layouts NewSource gives (and a conversion to tar folds writes):
//   - cells (<row>.values.npy, <row>.genes.npy, <row>.json) with the
//     archive's other files under MetaPrefix: the original archive,
//     byte for byte, the arrays rebuilt in its header's dtypes;
//   - cells alone (another tool's, in the same layout): a fresh archive of
//     version 0.1.0 without feature indices but a var_features of one block;
//   - no cells: every file under its path (archive mode).
//
// newSource makes the source of each pass. Where the files beside the cells
// come first, as in every layout this package writes, one pass does it all.
// Otherwise a listing pass (counting is true: its rows need not carry
// bytes; OpenPayload reads the files beside the cells) sorts the rows and
// copies those files, then a pass assembles the cells (a fresh archive
// takes two, the first to find its dtypes). The result is checked as
// Open checks an archive before it appears under out; on any error
// nothing does. An archive replaced (Overwrite) is written beside it under
// a temporary name first, then takes its place.
func WriteRows(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts RowsOptions) (*RowsStats, error) {
	return replacingDir(out, opts.Overwrite, func(tmp string) (*RowsStats, error) {
		st, err := writeRows(ctx, newSource, tmp, opts)
		if err != nil {
			return nil, err
		}
		st.Output = out
		return st, nil
	})
}

// replacingDir runs write on dst, or, when dst exists and may be
// replaced, on a temporary directory beside it that then takes its place.
func replacingDir(dst string, overwrite bool, write func(out string) (*RowsStats, error)) (*RowsStats, error) {
	out := dst
	if _, err := os.Lstat(dst); err == nil && overwrite {
		if err := replaceable(dst); err != nil {
			return nil, err
		}
		parent, base := filepath.Split(filepath.Clean(dst))
		safefile.SweepLeftovers(cmp.Or(parent, "."))
		out = filepath.Join(parent, strings.TrimSuffix(safefile.TempName(base), "*")+"new")
	}
	st, err := write(out)
	if err == nil && out != dst {
		err = safefile.ReplaceDir(out, dst)
	}
	if err != nil {
		if out != dst {
			os.RemoveAll(out)
		}
		return nil, err
	}
	return st, nil
}

// Result reports an archive rebuilt from what (the source, as a person
// names it).
func Result(st *RowsStats, what string) *registry.Result {
	res := &registry.Result{Output: st.Output, Members: int64(st.Files), Stats: st,
		Summary: fmt.Sprintf("%s: %d cells, %d values, %d files from %s (%s mode)", st.Output, st.Cells, st.NNZ, st.Files, what, st.Mode)}
	if st.Fresh {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: no %s files beside the cells: wrote a fresh header.sch (version 0.1.0), metadata.json, version.json and a var_features index whose genes are named by their index (gene and cell names are unknown; no obs_features)",
			st.Output, strings.TrimSuffix(MetaPrefix, "/")))
	}
	return res
}

// writeRows is WriteRows into a directory out that must not exist.
func writeRows(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts RowsOptions) (*RowsStats, error) {
	o, err := newOutDir(out)
	if err != nil {
		return nil, err
	}
	defer o.abort()
	st := &RowsStats{Output: out}
	sink := &rowsSink{o: o, optimistic: true}
	defer func() {
		if sink.arrays != nil {
			sink.arrays.close()
		}
	}()
	err = runPass(ctx, newSource, false, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
	switch {
	case errors.Is(err, errRestart):
		o.abort()
		return writeRowsPasses(ctx, newSource, out, opts)
	case err != nil:
		return nil, err
	}
	switch sink.mode {
	case "":
		if sink.metaSeen {
			return nil, fmt.Errorf("%s: the archive's other files (%s...) but no cells: %w", sink.name, sink.firstMeta, ErrEmpty)
		}
		return nil, fmt.Errorf("%s: no cells and no files: %w", sink.name, ErrEmpty)
	case ModeCells:
		if err := sink.finishCells(); err != nil {
			return nil, err
		}
	}
	st.Mode = sink.mode
	if err := commitArchive(o, st); err != nil {
		return nil, err
	}
	return st, nil
}

// errRestart: the rows do not come in the order that lets one pass
// rebuild the archive.
var errRestart = errors.New("the rows need more than one pass")

// writeRowsPasses is writeRows over rows in any order: a listing pass first.
func writeRowsPasses(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts RowsOptions) (*RowsStats, error) {
	o, err := newOutDir(out)
	if err != nil {
		return nil, err
	}
	defer o.abort()
	st := &RowsStats{Output: out}
	lay := &layoutSink{o: o}
	if err := runPass(ctx, newSource, true, lay, dataset.Options{Workers: opts.Workers}); err != nil {
		return nil, err
	}
	switch {
	case lay.cells == 0 && lay.other == 0 && lay.meta == 0:
		return nil, fmt.Errorf("%s: no cells and no files: %w", lay.name, ErrEmpty)
	case lay.cells == 0 && lay.other == 0:
		return nil, fmt.Errorf("%s: the archive's other files (%s...) but no cells: %w", lay.name, lay.firstMeta, ErrEmpty)
	case lay.cells == 0:
		st.Mode = ModeArchive
		if lay.meta > 0 {
			// Files under scdlmeta/ of an archive are files like any
			// other: start again without the copies.
			o.abort()
			if o, err = newOutDir(out); err != nil {
				return nil, err
			}
			defer o.abort()
		}
		err = runPass(ctx, newSource, false, &rowsSink{o: o, mode: ModeArchive}, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
	case lay.other > 0:
		return nil, fmt.Errorf("%s: beside cells (%s): %w", lay.firstOther, lay.firstCell, ErrNotCell)
	case lay.meta == 0:
		st.Mode, st.Fresh = ModeCells, true
		o.abort() // Writer makes its own temporary directory
		if err := freshFromCells(ctx, newSource, lay.name, out, opts, st); err != nil {
			return nil, err
		}
		st.Files = 6
		return st, nil
	default:
		st.Mode = ModeCells
		sink := &rowsSink{o: o, mode: ModeCells}
		if sink.arrays, err = newArrayWriter(o); err != nil {
			return nil, err
		}
		defer sink.arrays.close()
		sink.asm.done = sink.arrays.add
		err = runPass(ctx, newSource, false, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
		if err == nil {
			err = sink.finishCells()
		}
	}
	if err != nil {
		return nil, err
	}
	if err := commitArchive(o, st); err != nil {
		return nil, err
	}
	return st, nil
}

// commitArchive opens the archive built in o as Open checks it, and
// renames it into place.
func commitArchive(o *outDir, st *RowsStats) error {
	a, err := Open(o.tmp)
	if err != nil {
		return o.renameErr(err)
	}
	st.Cells, st.NNZ, st.Files = a.NumRows(), a.NNZ(), len(a.Files())
	a.Close()
	return o.commit()
}

// runPass runs one pass of a conversion over a new source.
func runPass(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), counting bool, sink interface {
	dataset.Sink
	use(src dataset.PayloadSource)
}, opts dataset.Options) error {
	src, err := newSource(counting)
	if err != nil {
		return err
	}
	defer registry.CloseSource(src)
	sink.use(src)
	return dataset.Run(ctx, src, sink, opts)
}

// trimDot drops a leading "./" from a member name.
func trimDot(name []byte) []byte {
	for bytes.HasPrefix(name, []byte("./")) {
		name = name[2:]
	}
	return name
}

// fileRow gives a row's reference and its name without "./": skip for a
// directory (an archive's directories follow from its files), an error for
// anything but a regular file.
func fileRow(src dataset.Source, shard int, r *dataset.Row) (ref rowRef, name []byte, skip bool, err error) {
	ref = refOf(src, shard, r)
	switch r.Kind {
	case dataset.KindDir:
		return ref, nil, true, nil
	case dataset.KindFile:
		return ref, trimDot(r.Name), false, nil
	}
	return ref, nil, false, fmt.Errorf("%s: a %s: an SCDL archive holds regular files only", ref, r.Kind)
}

// sourceName names a source in errors about the whole of it.
func sourceName(src dataset.Source) string {
	if src.NumShards() > 0 {
		return src.ShardName(0)
	}
	return "the source"
}

// rowRef names a row in errors: its shard and, for a source of records
// (tar), the record's offset.
type rowRef struct {
	src   dataset.Source
	shard int
	name  []byte
	off   int64
}

func refOf(src dataset.Source, shard int, r *dataset.Row) rowRef {
	return rowRef{src: src, shard: shard, name: r.Name, off: r.Offset}
}

func (r rowRef) String() string {
	if r.off >= 0 {
		return fmt.Sprintf("%s: offset %d: %s", r.src.ShardName(r.shard), r.off, r.name)
	}
	return fmt.Sprintf("%s: %s", r.src.ShardName(r.shard), r.name)
}

// layoutSink is the first pass: it sorts the rows into cells, the files
// beside them (copied into the archive as they come) and others.
type layoutSink struct {
	o           *outDir
	src         dataset.PayloadSource
	name        string // the source, for errors
	cells, meta int64
	other       int64
	firstCell   string
	firstMeta   string
	firstOther  string
	copier      fileCopier
}

func (l *layoutSink) use(src dataset.PayloadSource) {
	l.src, l.copier.src, l.name = src, src, sourceName(src)
}

func (l *layoutSink) Prepare(*dataset.Batch) error { return nil }
func (l *layoutSink) EndShard(int) error           { return nil }

func (l *layoutSink) Write(b *dataset.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		ref, name, skip, err := fileRow(l.src, b.Shard, r)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		if rel, ok := bytes.CutPrefix(name, []byte(MetaPrefix)); ok {
			if l.meta++; l.meta == 1 {
				l.firstMeta = ref.String()
			}
			if err := l.copier.copy(l.o, string(rel), r, ref); err != nil {
				return err
			}
			continue
		}
		if _, _, ok := cellsName(name); ok {
			if l.cells++; l.cells == 1 {
				l.firstCell = ref.String()
			}
			continue
		}
		if l.other++; l.other == 1 {
			l.firstOther = ref.String()
		}
	}
	return nil
}

// fileCopier writes rows as files of an archive directory.
type fileCopier struct {
	src dataset.PayloadSource
	// arrays lets the three arrays through (archive mode); beside cells,
	// which make them, they are refused.
	arrays bool
}

// copy writes the row's payload as the file rel: from the row's bytes, or
// through OpenPayload.
func (c *fileCopier) copy(o *outDir, rel string, r *dataset.Row, ref rowRef) error {
	if arrayFileSet[rel] && !c.arrays {
		return fmt.Errorf("%s: %s is made from the cells, not kept beside them", ref, rel)
	}
	out, err := o.create(rel)
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	var n int64
	if r.Inline != nil || r.Size == 0 {
		var k int
		k, err = out.Write(r.Inline)
		n = int64(k)
	} else {
		var rd io.Reader
		if rd, err = c.src.OpenPayload(r); err == nil {
			// A LimitedReader over an *os.File lets the kernel copy
			// (copy_file_range) where it can.
			if n, err = io.Copy(out, io.LimitReader(rd, r.Size)); err == nil && n == r.Size {
				err = dataset.EndOfPayload(rd)
			}
			if cl, ok := rd.(io.Closer); ok {
				cl.Close()
			}
		}
	}
	if err == nil && n != r.Size {
		err = fmt.Errorf("%d of %d bytes: %w", n, r.Size, io.ErrUnexpectedEOF)
	}
	if cerr := closeFile(out); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", ref, err)
	}
	return nil
}

// rowsSink writes an archive from rows. In archive mode it writes every
// file; in cells mode it assembles the cells and hands each to the
// assembler. An optimistic sink starts undecided and takes the layout from
// the rows as they come: files under MetaPrefix are copied, then the
// first cell opens the arrays (the header is among those files) or the
// first other file makes it archive mode; rows that do not fit that order
// return errRestart.
type rowsSink struct {
	o          *outDir
	src        dataset.PayloadSource
	name       string // the source, for errors
	mode       string // "" (undecided), ModeCells or ModeArchive
	optimistic bool
	metaSeen   bool
	firstMeta  string
	copier     fileCopier
	asm        cellAssembler
	arrays     *arrayWriter // cells mode with the files beside the cells
}

func (s *rowsSink) use(src dataset.PayloadSource) {
	s.src, s.copier.src, s.copier.arrays = src, src, s.mode == ModeArchive
	s.name = sourceName(src)
}

func (s *rowsSink) EndShard(int) error { return nil }

// Prepare parses, on the workers, the cells' members whose bytes the rows
// carry. A member that does not parse keeps its error for Write, which
// knows whether it is a cell's.
func (s *rowsSink) Prepare(b *dataset.Batch) error {
	// An optimistic sink's mode changes in Write: only a fixed one is read.
	if !s.optimistic && s.mode == ModeArchive {
		return nil
	}
	return prepareCellParts(s.src, b)
}

func (s *rowsSink) Write(b *dataset.Batch) error {
	parts, _ := b.Prep.([]cellPart)
	for i := range b.Rows {
		r := &b.Rows[i]
		ref, name, skip, err := fileRow(s.src, b.Shard, r)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		if s.mode == ModeArchive {
			if _, _, isCell := cellsName(name); isCell && s.optimistic {
				return errRestart // an archive's file, or cells after a stray file?
			}
			if err := s.copier.copy(s.o, string(name), r, ref); err != nil {
				return err
			}
			continue
		}
		rel, isMeta := bytes.CutPrefix(name, []byte(MetaPrefix))
		row, part, isCell := cellsName(name)
		switch {
		case isMeta:
			if s.optimistic {
				if !s.metaSeen {
					s.metaSeen, s.firstMeta = true, ref.String()
				}
				if err := s.copier.copy(s.o, string(rel), r, ref); err != nil {
					return err
				}
			}
			continue
		case s.mode == "" && isCell && s.metaSeen:
			arrays, err := newArrayWriter(s.o)
			if errors.Is(err, os.ErrNotExist) {
				return errRestart // header.sch may come later
			}
			if err != nil {
				return err
			}
			s.mode, s.arrays, s.asm.done = ModeCells, arrays, arrays.add
		case s.mode == "" && !isCell && !s.metaSeen:
			s.mode, s.copier.arrays = ModeArchive, true
			if err := s.copier.copy(s.o, string(name), r, ref); err != nil {
				return err
			}
			continue
		case s.mode == "":
			return errRestart
		case !isCell:
			return fmt.Errorf("%s: beside cells: %w", ref, ErrNotCell)
		}
		var p *cellPart
		if parts != nil && parts[i].part != 0 {
			p = &parts[i]
			if p.err != nil {
				return p.err
			}
		} else {
			data, err := dataset.ReadPayload(s.src, r)
			if err != nil {
				return fmt.Errorf("%s: %w", ref, err)
			}
			p = new(cellPart)
			if err := parseCellPart(p, row, part, data, ref); err != nil {
				return err
			}
		}
		if err := s.asm.add(p); err != nil {
			return err
		}
	}
	// A cell whose members straddle two batches keeps its first members'
	// bytes beyond this batch, whose mapped bytes are released next.
	s.asm.keep()
	return nil
}

// finishCells completes the last cell and the arrays.
func (s *rowsSink) finishCells() error {
	if err := s.asm.flush(); err != nil {
		return err
	}
	if s.arrays == nil {
		return nil
	}
	return s.arrays.finish(s.asm.next)
}

// cellsName reports whether a member name is <digits>.values.npy,
// <digits>.genes.npy or <digits>.json, and returns the row and the part.
func cellsName(name []byte) (row int64, part byte, ok bool) {
	dot := bytes.IndexByte(name, '.')
	if dot <= 0 || bytes.IndexByte(name, '/') >= 0 {
		return 0, 0, false
	}
	for _, c := range name[:dot] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
	}
	row, err := strconv.ParseInt(string(name[:dot]), 10, 64)
	if err != nil {
		return 0, 0, false
	}
	switch string(name[dot:]) {
	case ".values.npy":
		return row, 'v', true
	case ".genes.npy":
		return row, 'g', true
	case ".json":
		return row, 'j', true
	}
	return 0, 0, false
}

// cellPart is one parsed member of a cell.
type cellPart struct {
	row    int64
	part   byte   // 'v', 'g' or 'j'
	dtype  DType  // values and genes: the NPY dtype (signed genes: see signed)
	signed bool   // genes stored as signed integers ('<i8', ...)
	n      int    // elements
	data   []byte // raw little-endian elements
	nGenes int    // json: n_genes, -1 when absent
	ref    rowRef // where it comes from, for errors
	err    error  // why it did not parse (Prepare)
}

func (p *cellPart) where() string { return p.ref.String() }

// parseCellPart parses a cell's member from its bytes.
func parseCellPart(p *cellPart, row int64, part byte, payload []byte, ref rowRef) error {
	*p = cellPart{row: row, part: part, ref: ref, nGenes: -1}
	if part == 'j' {
		var j struct {
			Row    *int64 `json:"row"`
			NGenes *int   `json:"n_genes"`
		}
		if err := json.Unmarshal(payload, &j); err != nil {
			return fmt.Errorf("%s: %v", ref, err)
		}
		if j.Row != nil && *j.Row != row {
			return fmt.Errorf("%s: \"row\" is %d, the key says %d", ref, *j.Row, row)
		}
		if j.NGenes != nil {
			p.nGenes = *j.NGenes
		}
		return nil
	}
	if err := parseCellNPY(p, payload); err != nil {
		return fmt.Errorf("%s: %v", ref, err)
	}
	return nil
}

// signedDescrs are the signed integer dtypes accepted for gene indices
// (numpy's default integer is int64), by item size.
var signedDescrs = map[string]DType{"|i1": Uint8, "<i1": Uint8, "<i2": Uint16, "<i4": Uint32, "<i8": Uint64}

func parseCellNPY(p *cellPart, b []byte) error {
	h, err := ParseNPYHeader(b)
	if err != nil {
		return err
	}
	if len(h.Shape) != 1 {
		return fmt.Errorf("shape %v: want a 1-D array", h.Shape)
	}
	p.dtype = DTypeOfDescr(h.Descr)
	if p.part == 'g' && p.dtype == 0 {
		p.dtype, p.signed = signedDescrs[h.Descr], true
	}
	switch {
	case p.dtype == 0:
		return fmt.Errorf("dtype %q is not one SCDL stores", h.Descr)
	case p.part == 'g' && !p.dtype.Unsigned():
		return fmt.Errorf("gene indices of dtype %q: want integers", h.Descr)
	}
	p.n = h.Shape[0]
	if want := h.DataOffset + p.n*p.dtype.ItemSize(); len(b) != want {
		return fmt.Errorf("%d bytes, but its NPY header announces %d elements of %s (%d bytes)", len(b), p.n, h.Descr, want)
	}
	p.data = b[h.DataOffset:]
	return nil
}

// geneAt reads gene index i of a genes part.
func (p *cellPart) geneAt(i int) (uint64, error) {
	var v uint64
	switch p.dtype {
	case Uint8:
		v = uint64(p.data[i])
		if p.signed {
			v = uint64(int64(int8(p.data[i])))
		}
	case Uint16:
		v = uint64(binary.LittleEndian.Uint16(p.data[2*i:]))
		if p.signed {
			v = uint64(int64(int16(v)))
		}
	case Uint32:
		v = uint64(binary.LittleEndian.Uint32(p.data[4*i:]))
		if p.signed {
			v = uint64(int64(int32(v)))
		}
	default:
		v = binary.LittleEndian.Uint64(p.data[8*i:])
	}
	if p.signed && int64(v) < 0 {
		return 0, fmt.Errorf("%s: gene index %d is negative", p.where(), int64(v))
	}
	return v, nil
}

// cellAssembler groups parts into cells in row order and hands each
// complete cell to done.
type cellAssembler struct {
	next         int64 // the row the next cell must have
	cur          int64
	values       *cellPart
	genes        *cellPart
	json         *cellPart
	done         func(values, genes, json *cellPart) error
	last         *cellPart
	partsPending bool
}

// add takes the next part.
func (c *cellAssembler) add(p *cellPart) error {
	if c.partsPending && p.row != c.cur {
		if err := c.flush(); err != nil {
			return err
		}
	}
	if !c.partsPending {
		if p.row != c.next {
			if p.row < c.next {
				return fmt.Errorf("%s: cell %d comes after cell %d: %w", p.where(), p.row, c.next-1, ErrCellOrder)
			}
			return fmt.Errorf("%s: cell %d, but cell %d is missing", p.where(), p.row, c.next)
		}
		c.cur, c.partsPending = p.row, true
	}
	slot := &c.json
	switch p.part {
	case 'v':
		slot = &c.values
	case 'g':
		slot = &c.genes
	}
	if *slot != nil {
		return fmt.Errorf("%s: a second member of this kind for cell %d", p.where(), p.row)
	}
	*slot, c.last = p, p
	return nil
}

// keep copies the bytes of the pending cell's parts, which outlive the
// batch that held them.
func (c *cellAssembler) keep() {
	for _, p := range []*cellPart{c.values, c.genes} {
		if p != nil {
			p.data = bytes.Clone(p.data)
		}
	}
}

// flush completes the pending cell.
func (c *cellAssembler) flush() error {
	if !c.partsPending {
		return nil
	}
	switch {
	case c.values == nil:
		return fmt.Errorf("%s: cell %d has no .values.npy", c.last.where(), c.cur)
	case c.genes == nil:
		return fmt.Errorf("%s: cell %d has no .genes.npy", c.last.where(), c.cur)
	case c.values.n != c.genes.n:
		return fmt.Errorf("%s: cell %d has %d values but %d gene indices", c.genes.where(), c.cur, c.values.n, c.genes.n)
	}
	if err := c.done(c.values, c.genes, c.json); err != nil {
		return err
	}
	c.values, c.genes, c.json, c.partsPending = nil, nil, nil, false
	c.next++
	return nil
}

// arrayWriter writes the three arrays of an archive from its cells, in the
// dtypes of the header.sch already in the archive's directory.
type arrayWriter struct {
	dataDT, rowDT, colDT DType
	nrows, nnz           uint64 // the header's
	files                [3]*os.File
	data, rowPtr, colPtr *bufWriter
	total                uint64 // values written
}

// newArrayWriter reads the header and creates the arrays' files; without
// a header, the error is os.ErrNotExist.
func newArrayWriter(o *outDir) (*arrayWriter, error) {
	return arrayWriterFor(o, o.create)
}

// arrayWriterFor is newArrayWriter with the arrays' files opened by
// create, or none opened where create is nil.
func arrayWriterFor(o *outDir, create func(rel string) (*os.File, error)) (*arrayWriter, error) {
	hb, err := os.ReadFile(filepath.Join(o.tmp, HeaderFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the files beside the cells (%s) have no %s: %w", MetaPrefix, HeaderFile, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	h, err := DecodeHeader(hb)
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			e.Path = MetaPrefix + HeaderFile
		}
		return nil, err
	}
	w := &arrayWriter{}
	for _, a := range h.Arrays {
		switch a.Name {
		case ArrayData:
			w.dataDT, w.nnz = a.DType, a.Length
		case ArrayRowPtr:
			w.rowDT, w.nrows = a.DType, a.Length-1
		case ArrayColPtr:
			w.colDT = a.DType
		}
	}
	if !w.dataDT.Numeric() || !w.rowDT.Unsigned() || !w.colDT.Unsigned() {
		return nil, fmt.Errorf("%s%s: arrays of dtypes DATA %v, ROWPTR %v, COLPTR %v: want a numeric one and two unsigned", MetaPrefix, HeaderFile, w.dataDT, w.rowDT, w.colDT)
	}
	if create == nil {
		return w, nil
	}
	var bufs [3]*bufWriter
	for i, name := range []string{DataFile, RowPtrFile, ColPtrFile} {
		f, err := create(name)
		if err != nil {
			w.close()
			return nil, err
		}
		w.files[i], bufs[i] = f, newBufWriter(f)
	}
	w.data, w.rowPtr, w.colPtr = bufs[0], bufs[1], bufs[2]
	w.rowPtr.putUint(w.rowDT, 0)
	return w, nil
}

// add writes one cell.
func (w *arrayWriter) add(v, g, _ *cellPart) error {
	if v.dtype != w.dataDT {
		return fmt.Errorf("%s: values of dtype %v, but the archive's data dtype is %v", v.where(), v.dtype, w.dataDT)
	}
	w.data.write(v.data)
	if g.dtype == w.colDT && !g.signed {
		w.colPtr.write(g.data)
	} else {
		colMax := maxOf(w.colDT)
		for i := range g.n {
			x, err := g.geneAt(i)
			if err != nil {
				return err
			}
			if x > colMax {
				return fmt.Errorf("%s: gene index %d does not fit col_ptr's dtype %v (the header's)", g.where(), x, w.colDT)
			}
			w.colPtr.putUint(w.colDT, x)
		}
	}
	w.total += uint64(v.n)
	if w.total > maxOf(w.rowDT) {
		return fmt.Errorf("%s: %d values do not fit row_ptr's dtype %v (the header's)", v.where(), w.total, w.rowDT)
	}
	w.rowPtr.putUint(w.rowDT, w.total)
	return nil
}

// finish checks the cells against the header and closes the files.
func (w *arrayWriter) finish(cells int64) error {
	defer w.close()
	if uint64(cells) != w.nrows || w.total != w.nnz {
		return fmt.Errorf("the cells hold %d cells and %d values, but %s%s describes %d cells and %d values", cells, w.total, MetaPrefix, HeaderFile, w.nrows, w.nnz)
	}
	for i, b := range []*bufWriter{w.data, w.rowPtr, w.colPtr} {
		if err := b.flush(); err != nil {
			return err
		}
		f := w.files[i]
		w.files[i] = nil
		if err := closeFile(f); err != nil {
			return err
		}
	}
	return nil
}

// close closes what finish did not.
func (w *arrayWriter) close() {
	for i, f := range w.files {
		if f != nil {
			f.Close()
			w.files[i] = nil
		}
	}
}

// freshFromCells writes a new archive from cells alone: a first pass
// finds the dtypes and the number of genes, a second writes the rows.
func freshFromCells(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), name, out string, opts RowsOptions, st *RowsStats) error {
	var dataDT DType
	var firstWhere string
	var nnz, maxGene uint64
	var anyGene bool
	nGenes := 0
	first := &rowsSink{mode: ModeCells}
	first.asm.done = func(v, g, j *cellPart) error {
		if dataDT == 0 {
			dataDT, firstWhere = v.dtype, v.where()
		} else if v.dtype != dataDT {
			return fmt.Errorf("%s: values of dtype %v, but %s has %v: an archive has one data dtype", v.where(), v.dtype, firstWhere, dataDT)
		}
		for i := range g.n {
			x, err := g.geneAt(i)
			if err != nil {
				return err
			}
			if x > maxGene || !anyGene {
				maxGene, anyGene = max(x, maxGene), true
			}
		}
		if j != nil && j.nGenes > 0 {
			nGenes = max(nGenes, j.nGenes)
		}
		nnz += uint64(v.n)
		return nil
	}
	if err := runPass(ctx, newSource, false, first, dataset.Options{Workers: opts.Workers}); err != nil {
		return err
	}
	if err := first.asm.flush(); err != nil {
		return err
	}
	cells := first.asm.next
	switch {
	case cells == 0:
		return fmt.Errorf("%s: no cells: bionemo-scdl cannot write or open an archive of 0 cells: %w", name, ErrEmpty)
	case nnz == 0:
		return fmt.Errorf("%s: %d cells but no non-zero value: bionemo-scdl cannot write or open an archive of 0 values: %w", name, cells, ErrEmpty)
	case maxGene >= maxFreshGenes:
		return fmt.Errorf("%s: gene index %d: more genes than a var_features index is made for (%d): %w", name, maxGene, maxFreshGenes, ErrUnsupported)
	case nGenes > maxFreshGenes:
		// As many names as genes are made: one cell's n_genes is not a
		// reason to allocate gigabytes.
		return fmt.Errorf("%s: n_genes %d: more genes than a var_features index is made for (%d): %w", name, nGenes, maxFreshGenes, ErrUnsupported)
	}
	nGenes = max(nGenes, int(maxGene)+1)
	// bionemo-scdl counts rows in the var_features index: without one it
	// reads the archive as empty. The genes' names are unknown; they get
	// AnnData's default names, their indices ("0", "1", ...).
	names := make([]string, nGenes)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	features, err := OneBlockFeatureIndex(VarFeatures, int(cells), names)
	if err != nil {
		return err
	}
	var rels []string
	for _, f := range features {
		rels = append(rels, f.Rel)
	}
	w, err := Create(out, WriterOptions{DataDType: dataDT, GeneDType: Uint64, NGenes: []int{nGenes},
		FeatureIndices: []FeatureIndexInfo{{Name: VarFeatures, Length: uint64(cells), DType: StringArray, Files: rels}}})
	if err != nil {
		return err
	}
	defer w.Abort()
	var genes []byte
	second := &rowsSink{mode: ModeCells}
	second.asm.done = func(v, g, _ *cellPart) error {
		genes = genes[:0]
		for i := range g.n {
			x, _ := g.geneAt(i)
			genes = binary.LittleEndian.AppendUint64(genes, x)
		}
		return w.AddRow(v.data, genes)
	}
	if err := runPass(ctx, newSource, false, second, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return err
	}
	if err := second.asm.flush(); err != nil {
		return err
	}
	for _, f := range features {
		if err := w.AddFile(f.Rel, bytes.NewReader(f.Data)); err != nil {
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	st.Cells, st.NNZ = int(cells), nnz
	return nil
}

// outDir is an archive directory built under a temporary name beside
// its target and renamed into place when complete.
type outDir struct {
	final, tmp string
	done       bool
}

func newOutDir(final string) (*outDir, error) {
	final = filepath.Clean(final)
	if _, err := os.Lstat(final); err == nil {
		return nil, fmt.Errorf("%s: %w: the SCDL archive is written as a new directory", final, fs.ErrExist)
	}
	parent, base := filepath.Split(final)
	if parent == "" {
		parent = "."
	}
	safefile.SweepLeftovers(parent)
	tmp, err := os.MkdirTemp(parent, safefile.TempName(base))
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", final, err)
	}
	return &outDir{final: final, tmp: tmp}, nil
}

// create makes the file rel (slash-separated, inside the archive).
func (o *outDir) create(rel string) (*os.File, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, "\\") {
		return nil, fmt.Errorf("%s is not a path inside the archive", human.Name(rel))
	}
	p := filepath.Join(o.tmp, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s: the file comes twice", rel)
	}
	return f, err
}

// closeFile syncs and closes a finished file.
func closeFile(f *os.File) error {
	err := f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// renameErr names the target instead of the temporary directory.
func (o *outDir) renameErr(err error) error {
	var e *Error
	if errors.As(err, &e) && strings.HasPrefix(e.Path, o.tmp) {
		e.Path = o.final + strings.TrimPrefix(e.Path, o.tmp)
	}
	return err
}

func (o *outDir) commit() error {
	if err := os.Chmod(o.tmp, 0o755); err != nil {
		return err
	}
	// Exclusive: a directory that appeared meanwhile (another run into
	// the same new archive), even an empty one, is never replaced.
	if err := safefile.RenameNoReplace(o.tmp, o.final); err != nil {
		return err
	}
	o.done = true
	if d, err := os.Open(filepath.Dir(o.final)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (o *outDir) abort() {
	if !o.done {
		o.done = true
		os.RemoveAll(o.tmp)
	}
}

// maxOf is the largest value of an unsigned dtype.
func maxOf(d DType) uint64 {
	if d.ItemSize() >= 8 {
		return math.MaxUint64
	}
	return 1<<(8*d.ItemSize()) - 1
}

// bufWriter is a buffered writer that keeps its first error.
type bufWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func newBufWriter(w io.Writer) *bufWriter {
	return &bufWriter{w: w, buf: make([]byte, 0, syswrite.MaxWrite)}
}

func (b *bufWriter) write(p []byte) {
	if len(b.buf)+len(p) > cap(b.buf) {
		b.flush()
		if len(p) > cap(b.buf) {
			if b.err == nil {
				_, b.err = b.w.Write(p)
			}
			return
		}
	}
	b.buf = append(b.buf, p...)
}

func (b *bufWriter) putUint(d DType, v uint64) {
	if len(b.buf)+8 > cap(b.buf) {
		b.flush()
	}
	switch d {
	case Uint8:
		b.buf = append(b.buf, byte(v))
	case Uint16:
		b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(v))
	case Uint32:
		b.buf = binary.LittleEndian.AppendUint32(b.buf, uint32(v))
	default:
		b.buf = binary.LittleEndian.AppendUint64(b.buf, v)
	}
}

func (b *bufWriter) flush() error {
	if b.err == nil && len(b.buf) > 0 {
		_, b.err = b.w.Write(b.buf)
	}
	b.buf = b.buf[:0]
	return b.err
}
