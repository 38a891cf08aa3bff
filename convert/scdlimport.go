package convert

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tarscan"
)

// ErrNotCell: a file beside an archive's cells that is neither a cell's
// member nor one of the archive's other files (under SCDLMetaPrefix).
var ErrNotCell = errors.New("not a cell's member (<row>.values.npy, <row>.genes.npy or <row>.json)")

// SCDLImportOptions tune ToSCDL and TarToSCDL.
type SCDLImportOptions struct {
	// Fold is the fold TarToSCDL reads: "" finds fold "scdl" (archive
	// mode) or "cells" (with "scdlmeta" when present).
	Fold     string
	Workers  int
	Progress func(Progress)
}

// SCDLImportStats describes a rebuilt archive.
type SCDLImportStats struct {
	Output string `json:"output"`
	Mode   string `json:"mode"` // cells or archive
	Fold   string `json:"fold,omitempty"`
	Cells  int    `json:"cells"`
	NNZ    uint64 `json:"nnz"`
	Files  int    `json:"files"`
	// Fresh: no files beside the cells (no scdlmeta), so a new header,
	// metadata.json, version.json and a var_features index of one block
	// were written.
	Fresh bool `json:"fresh"`
}

// TarToSCDL rebuilds an SCDL archive at out (a directory that must not
// exist) from the folds SCDLToTar writes in dir: fold "scdl" (archive
// mode), or fold "cells" with fold "scdlmeta" beside it when there is one.
// A fold named otherwise (opts.Fold) may hold cells with the other files
// under SCDLMetaPrefix, as a conversion through Barecat or TBL leaves
// them. See ToSCDL.
func TarToSCDL(ctx context.Context, dir, out string, opts SCDLImportOptions) (*SCDLImportStats, error) {
	folds, err := taridx.Discover(dir)
	if err != nil {
		return nil, err
	}
	byName := map[string]taridx.Fold{}
	var names []string
	for _, f := range folds {
		byName[f.Name] = f
		names = append(names, f.Name)
	}
	pick := opts.Fold
	if pick == "" {
		switch {
		case len(byName[SCDLArchiveFold].Shards) > 0:
			pick = SCDLArchiveFold
		case len(byName[SCDLCellsFold].Shards) > 0:
			pick = SCDLCellsFold
		default:
			return nil, fmt.Errorf("%s: no fold %q or %q (folds: %s)", dir, SCDLArchiveFold, SCDLCellsFold, strings.Join(names, ", "))
		}
	}
	f, ok := byName[pick]
	if !ok {
		return nil, fmt.Errorf("%s: no fold %q (folds: %s)", dir, pick, strings.Join(names, ", "))
	}
	// The scdlmeta fold goes with a fold of cells, not with an archive's.
	meta, withMeta := byName[SCDLMetaFold]
	if withMeta && pick != SCDLMetaFold {
		if withMeta, err = foldHoldsCells(f.Shards); err != nil {
			return nil, err
		}
	}
	st, err := ToSCDL(ctx, func(counting bool) (PayloadSource, error) {
		var parts []Part
		if withMeta {
			parts = append(parts, Part{Source: tarSource(meta.Shards, !counting), Prefix: SCDLMetaPrefix})
		}
		return NewConcat(append(parts, Part{Source: tarSource(f.Shards, !counting)})...), nil
	}, out, opts)
	if err != nil {
		return nil, err
	}
	st.Fold = pick
	return st, nil
}

// tarSource reads tar shards, with their payloads in the rows if withData.
func tarSource(shards []string, withData bool) *TarShards {
	t := NewTarShards(shards, tarscan.Options{})
	if withData {
		t.ReadPayloads, t.BatchBytes = true, 4<<20
	}
	return t
}

// foldHoldsCells tells the two layouts apart by the first regular member:
// a cell's member, or a file of the archive.
func foldHoldsCells(shards []string) (bool, error) {
	for _, sh := range shards {
		f, err := tarscan.Open(sh, tarscan.Options{})
		if err != nil {
			return false, err
		}
		for {
			m, err := f.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return false, err
			}
			if m.IsRegular() {
				f.Close()
				_, _, ok := cellsName(trimDot(m.Name))
				return ok, nil
			}
		}
		f.Close()
	}
	return true, nil // no members: refused as a fold of no cells
}

// ToSCDL builds an SCDL archive at out (a directory that must not exist)
// from any source of rows in one of the layouts NewSCDLSource and
// SCDLToTar write:
//   - cells (<row>.values.npy, <row>.genes.npy, <row>.json) with the
//     archive's other files under SCDLMetaPrefix: the original archive,
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
// scdl.Open checks an archive before it appears under out; on any error
// nothing does.
func ToSCDL(ctx context.Context, newSource func(counting bool) (PayloadSource, error), out string, opts SCDLImportOptions) (*SCDLImportStats, error) {
	o, err := newSCDLOutDir(out)
	if err != nil {
		return nil, err
	}
	defer o.abort()
	st := &SCDLImportStats{Output: out}
	sink := &scdlSink{o: o, optimistic: true}
	defer func() {
		if sink.arrays != nil {
			sink.arrays.close()
		}
	}()
	err = runPass(ctx, newSource, false, sink, Options{Workers: opts.Workers, Progress: opts.Progress})
	switch {
	case errors.Is(err, errRestart):
		o.abort()
		return toSCDLPasses(ctx, newSource, out, opts)
	case err != nil:
		return nil, err
	}
	switch sink.mode {
	case "":
		if sink.metaSeen {
			return nil, fmt.Errorf("%s: the archive's other files (%s...) but no cells: %w", sink.name, sink.firstMeta, scdl.ErrEmpty)
		}
		return nil, fmt.Errorf("%s: no cells and no files: %w", sink.name, scdl.ErrEmpty)
	case SCDLModeCells:
		if err := sink.finishCells(); err != nil {
			return nil, err
		}
	}
	st.Mode = sink.mode
	if err := commitSCDL(o, st); err != nil {
		return nil, err
	}
	return st, nil
}

// errRestart: the rows do not come in the order that lets one pass
// rebuild the archive.
var errRestart = errors.New("the rows need more than one pass")

// toSCDLPasses is ToSCDL over rows in any order: a listing pass first.
func toSCDLPasses(ctx context.Context, newSource func(counting bool) (PayloadSource, error), out string, opts SCDLImportOptions) (*SCDLImportStats, error) {
	o, err := newSCDLOutDir(out)
	if err != nil {
		return nil, err
	}
	defer o.abort()
	st := &SCDLImportStats{Output: out}
	lay := &scdlLayout{o: o}
	if err := runPass(ctx, newSource, true, lay, Options{Workers: opts.Workers}); err != nil {
		return nil, err
	}
	switch {
	case lay.cells == 0 && lay.other == 0 && lay.meta == 0:
		return nil, fmt.Errorf("%s: no cells and no files: %w", lay.name, scdl.ErrEmpty)
	case lay.cells == 0 && lay.other == 0:
		return nil, fmt.Errorf("%s: the archive's other files (%s...) but no cells: %w", lay.name, lay.firstMeta, scdl.ErrEmpty)
	case lay.cells == 0:
		st.Mode = SCDLModeArchive
		if lay.meta > 0 {
			// Files under scdlmeta/ of an archive are files like any
			// other: start again without the copies.
			o.abort()
			if o, err = newSCDLOutDir(out); err != nil {
				return nil, err
			}
			defer o.abort()
		}
		err = runPass(ctx, newSource, false, &scdlSink{o: o, mode: SCDLModeArchive}, Options{Workers: opts.Workers, Progress: opts.Progress})
	case lay.other > 0:
		return nil, fmt.Errorf("%s: beside cells (%s): %w", lay.firstOther, lay.firstCell, ErrNotCell)
	case lay.meta == 0:
		st.Mode, st.Fresh = SCDLModeCells, true
		o.abort() // scdl.Writer makes its own temporary directory
		if err := freshFromCells(ctx, newSource, lay.name, out, opts, st); err != nil {
			return nil, err
		}
		st.Files = 6
		return st, nil
	default:
		st.Mode = SCDLModeCells
		sink := &scdlSink{o: o, mode: SCDLModeCells}
		if sink.arrays, err = newArrayWriter(o); err != nil {
			return nil, err
		}
		defer sink.arrays.close()
		sink.asm.done = sink.arrays.add
		err = runPass(ctx, newSource, false, sink, Options{Workers: opts.Workers, Progress: opts.Progress})
		if err == nil {
			err = sink.finishCells()
		}
	}
	if err != nil {
		return nil, err
	}
	if err := commitSCDL(o, st); err != nil {
		return nil, err
	}
	return st, nil
}

// commitSCDL opens the archive built in o as scdl.Open checks it, and
// renames it into place.
func commitSCDL(o *scdlOutDir, st *SCDLImportStats) error {
	a, err := scdl.Open(o.tmp)
	if err != nil {
		return o.renameErr(err)
	}
	st.Cells, st.NNZ, st.Files = a.NumRows(), a.NNZ(), len(a.Files())
	a.Close()
	return o.commit()
}

// runPass runs one pass of a conversion over a new source.
func runPass(ctx context.Context, newSource func(counting bool) (PayloadSource, error), counting bool, sink interface {
	Sink
	use(src PayloadSource)
}, opts Options) error {
	src, err := newSource(counting)
	if err != nil {
		return err
	}
	defer closeSource(src)
	sink.use(src)
	return Run(ctx, src, sink, opts)
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
func fileRow(src Source, shard int, r *Row) (ref rowRef, name []byte, skip bool, err error) {
	ref = refOf(src, shard, r)
	switch r.Kind {
	case KindDir:
		return ref, nil, true, nil
	case KindFile:
		return ref, trimDot(r.Name), false, nil
	}
	return ref, nil, false, fmt.Errorf("%s: a %s: an SCDL archive holds regular files only", ref, r.Kind)
}

// sourceName names a source in errors about the whole of it.
func sourceName(src Source) string {
	if src.NumShards() > 0 {
		return src.ShardName(0)
	}
	return "the source"
}

// rowRef names a row in errors: its shard and, for tar, its header's offset.
type rowRef struct {
	src   Source
	shard int
	name  []byte
	off   int64
}

func refOf(src Source, shard int, r *Row) rowRef {
	return rowRef{src: src, shard: shard, name: r.Name, off: r.Offset}
}

func (r rowRef) String() string {
	if r.off >= 0 {
		return fmt.Sprintf("%s: offset %d: %s", r.src.ShardName(r.shard), r.off, r.name)
	}
	return fmt.Sprintf("%s: %s", r.src.ShardName(r.shard), r.name)
}

// scdlLayout is the first pass: it sorts the rows into cells, the files
// beside them (copied into the archive as they come) and others.
type scdlLayout struct {
	o           *scdlOutDir
	src         PayloadSource
	name        string // the source, for errors
	cells, meta int64
	other       int64
	firstCell   string
	firstMeta   string
	firstOther  string
	copier      fileCopier
}

func (l *scdlLayout) use(src PayloadSource) {
	l.src, l.copier.src, l.name = src, src, sourceName(src)
}

func (l *scdlLayout) Prepare(*Batch) error { return nil }
func (l *scdlLayout) EndShard(int) error   { return nil }

func (l *scdlLayout) Write(b *Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		ref, name, skip, err := fileRow(l.src, b.Shard, r)
		if err != nil {
			return err
		}
		if skip {
			continue
		}
		if rel, ok := bytes.CutPrefix(name, []byte(SCDLMetaPrefix)); ok {
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
	src PayloadSource
	// arrays lets the three arrays through (archive mode); beside cells,
	// which make them, they are refused.
	arrays bool
}

// copy writes the row's payload as the file rel: from the row's bytes, or
// through OpenPayload.
func (c *fileCopier) copy(o *scdlOutDir, rel string, r *Row, ref rowRef) error {
	if scdlArrays[rel] && !c.arrays {
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

// scdlSink writes an archive from rows. In archive mode it writes every
// file; in cells mode it assembles the cells and hands each to the
// assembler. An optimistic sink starts undecided and takes the layout from
// the rows as they come: files under SCDLMetaPrefix are copied, then the
// first cell opens the arrays (the header is among those files) or the
// first other file makes it archive mode; rows that do not fit that order
// return errRestart.
type scdlSink struct {
	o          *scdlOutDir
	src        PayloadSource
	name       string // the source, for errors
	mode       string // "" (undecided), SCDLModeCells or SCDLModeArchive
	optimistic bool
	metaSeen   bool
	firstMeta  string
	copier     fileCopier
	asm        cellAssembler
	arrays     *arrayWriter // cells mode with the files beside the cells
}

func (s *scdlSink) use(src PayloadSource) {
	s.src, s.copier.src, s.copier.arrays = src, src, s.mode == SCDLModeArchive
	s.name = sourceName(src)
}

func (s *scdlSink) EndShard(int) error { return nil }

// Prepare parses, on the workers, the cells' members whose bytes the rows
// carry. A member that does not parse keeps its error for Write, which
// knows whether it is a cell's.
func (s *scdlSink) Prepare(b *Batch) error {
	// An optimistic sink's mode changes in Write: only a fixed one is read.
	if !s.optimistic && s.mode == SCDLModeArchive {
		return nil
	}
	var parts []cellPart
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != KindFile || r.Inline == nil {
			continue
		}
		row, part, ok := cellsName(trimDot(r.Name))
		if !ok {
			continue
		}
		if parts == nil {
			parts = make([]cellPart, len(b.Rows))
		}
		parts[i].err = parseCellPart(&parts[i], row, part, r.Inline, refOf(s.src, b.Shard, r))
	}
	b.Prep = parts
	return nil
}

func (s *scdlSink) Write(b *Batch) error {
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
		if s.mode == SCDLModeArchive {
			if _, _, isCell := cellsName(name); isCell && s.optimistic {
				return errRestart // an archive's file, or cells after a stray file?
			}
			if err := s.copier.copy(s.o, string(name), r, ref); err != nil {
				return err
			}
			continue
		}
		rel, isMeta := bytes.CutPrefix(name, []byte(SCDLMetaPrefix))
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
			s.mode, s.arrays, s.asm.done = SCDLModeCells, arrays, arrays.add
		case s.mode == "" && !isCell && !s.metaSeen:
			s.mode, s.copier.arrays = SCDLModeArchive, true
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
func (s *scdlSink) finishCells() error {
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
	part   byte       // 'v', 'g' or 'j'
	dtype  scdl.DType // values and genes: the NPY dtype (signed genes: see signed)
	signed bool       // genes stored as signed integers ('<i8', ...)
	n      int        // elements
	data   []byte     // raw little-endian elements
	nGenes int        // json: n_genes, -1 when absent
	ref    rowRef     // where it comes from, for errors
	err    error      // why it did not parse (Prepare)
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
var signedDescrs = map[string]scdl.DType{"|i1": scdl.Uint8, "<i1": scdl.Uint8, "<i2": scdl.Uint16, "<i4": scdl.Uint32, "<i8": scdl.Uint64}

func parseCellNPY(p *cellPart, b []byte) error {
	h, err := scdl.ParseNPYHeader(b)
	if err != nil {
		return err
	}
	if len(h.Shape) != 1 {
		return fmt.Errorf("shape %v: want a 1-D array", h.Shape)
	}
	p.dtype = scdl.DTypeOfDescr(h.Descr)
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
	case scdl.Uint8:
		v = uint64(p.data[i])
		if p.signed {
			v = uint64(int64(int8(p.data[i])))
		}
	case scdl.Uint16:
		v = uint64(binary.LittleEndian.Uint16(p.data[2*i:]))
		if p.signed {
			v = uint64(int64(int16(v)))
		}
	case scdl.Uint32:
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
	dataDT, rowDT, colDT scdl.DType
	nrows, nnz           uint64 // the header's
	files                [3]*os.File
	data, rowPtr, colPtr *bufWriter
	total                uint64 // values written
}

// newArrayWriter reads the header and creates the arrays' files; without
// a header, the error is os.ErrNotExist.
func newArrayWriter(o *scdlOutDir) (*arrayWriter, error) {
	hb, err := os.ReadFile(filepath.Join(o.tmp, scdl.HeaderFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("the files beside the cells (%s) have no %s: %w", SCDLMetaPrefix, scdl.HeaderFile, os.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	h, err := scdl.DecodeHeader(hb)
	if err != nil {
		var e *scdl.Error
		if errors.As(err, &e) {
			e.Path = SCDLMetaPrefix + scdl.HeaderFile
		}
		return nil, err
	}
	w := &arrayWriter{}
	for _, a := range h.Arrays {
		switch a.Name {
		case scdl.ArrayData:
			w.dataDT, w.nnz = a.DType, a.Length
		case scdl.ArrayRowPtr:
			w.rowDT, w.nrows = a.DType, a.Length-1
		case scdl.ArrayColPtr:
			w.colDT = a.DType
		}
	}
	if !w.dataDT.Numeric() || !w.rowDT.Unsigned() || !w.colDT.Unsigned() {
		return nil, fmt.Errorf("%s%s: arrays of dtypes DATA %v, ROWPTR %v, COLPTR %v: want a numeric one and two unsigned", SCDLMetaPrefix, scdl.HeaderFile, w.dataDT, w.rowDT, w.colDT)
	}
	var bufs [3]*bufWriter
	for i, name := range []string{scdl.DataFile, scdl.RowPtrFile, scdl.ColPtrFile} {
		f, err := o.create(name)
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
		return fmt.Errorf("the cells hold %d cells and %d values, but %s%s describes %d cells and %d values", cells, w.total, SCDLMetaPrefix, scdl.HeaderFile, w.nrows, w.nnz)
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
func freshFromCells(ctx context.Context, newSource func(counting bool) (PayloadSource, error), name, out string, opts SCDLImportOptions, st *SCDLImportStats) error {
	var dataDT scdl.DType
	var firstWhere string
	var nnz, maxGene uint64
	var anyGene bool
	nGenes := 0
	first := &scdlSink{mode: SCDLModeCells}
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
	if err := runPass(ctx, newSource, false, first, Options{Workers: opts.Workers}); err != nil {
		return err
	}
	if err := first.asm.flush(); err != nil {
		return err
	}
	cells := first.asm.next
	switch {
	case cells == 0:
		return fmt.Errorf("%s: no cells: bionemo-scdl cannot write or open an archive of 0 cells: %w", name, scdl.ErrEmpty)
	case nnz == 0:
		return fmt.Errorf("%s: %d cells but no non-zero value: bionemo-scdl cannot write or open an archive of 0 values: %w", name, cells, scdl.ErrEmpty)
	case maxGene >= math.MaxInt32:
		return fmt.Errorf("gene index %d: too many genes", maxGene)
	}
	nGenes = max(nGenes, int(maxGene)+1)
	// bionemo-scdl counts rows in the var_features index: without one it
	// reads the archive as empty. The genes' names are unknown; they get
	// AnnData's default names, their indices ("0", "1", ...).
	names := make([]string, nGenes)
	for i := range names {
		names[i] = strconv.Itoa(i)
	}
	features, err := scdl.OneBlockFeatureIndex(scdl.VarFeatures, int(cells), names)
	if err != nil {
		return err
	}
	var rels []string
	for _, f := range features {
		rels = append(rels, f.Rel)
	}
	w, err := scdl.Create(out, scdl.WriterOptions{DataDType: dataDT, GeneDType: scdl.Uint64, NGenes: []int{nGenes},
		FeatureIndices: []scdl.FeatureIndexInfo{{Name: scdl.VarFeatures, Length: uint64(cells), DType: scdl.StringArray, Files: rels}}})
	if err != nil {
		return err
	}
	defer w.Abort()
	var genes []byte
	second := &scdlSink{mode: SCDLModeCells}
	second.asm.done = func(v, g, _ *cellPart) error {
		genes = genes[:0]
		for i := range g.n {
			x, _ := g.geneAt(i)
			genes = binary.LittleEndian.AppendUint64(genes, x)
		}
		return w.AddRow(v.data, genes)
	}
	if err := runPass(ctx, newSource, false, second, Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
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
