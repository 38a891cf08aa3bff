package convert

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/safefile"
)

// The folds an SCDL archive becomes.
const (
	// SCDLCellsFold holds one sample per cell (per-cell mode).
	SCDLCellsFold = "cells"
	// SCDLMetaFold holds every file of the archive but the three arrays,
	// byte for byte, beside the cells fold.
	SCDLMetaFold = "scdlmeta"
	// SCDLArchiveFold holds every file of the archive (archive mode).
	SCDLArchiveFold = "scdl"
)

// SCDL export modes.
const (
	SCDLModeCells   = "cells"
	SCDLModeArchive = "archive"
)

// scdlArrays are the files rebuilt from the cells, not kept in scdlmeta.
// ErrCellOrder: per-cell shards whose cells are not in row order, each
// cell's members together.
var ErrCellOrder = errors.New("cells must come in row order, each member of a cell together")

var scdlArrays = map[string]bool{scdl.DataFile: true, scdl.RowPtrFile: true, scdl.ColPtrFile: true}

// SCDLExportOptions tune SCDLToTar.
type SCDLExportOptions struct {
	Dir  string
	Mode string // SCDLModeCells (default) or SCDLModeArchive
	// Fold names the main fold (default "cells", or "scdl" in archive mode).
	Fold      string
	ShardSize int64 // default 1 GiB
	// CellsPerShard, in cells mode, also starts a new shard after that many
	// cells.
	CellsPerShard int
	Workers       int
	Progress      func(Progress)
	// Replace lets the folds written replace earlier folds of the same
	// names in Dir, once complete (FoldOptions.Replace); without it, an
	// existing fold is refused.
	Replace bool
}

// SCDLExportStats describes an export.
type SCDLExportStats struct {
	Mode  string     `json:"mode"`
	Cells int        `json:"cells"`
	NNZ   uint64     `json:"nnz"`
	Fold  *FoldStats `json:"fold"`
	Meta  *FoldStats `json:"meta,omitempty"` // cells mode: the scdlmeta fold
}

// SCDLToTar writes an opened SCDL archive as folds of tar shards in
// opts.Dir. Cells mode writes fold "cells", one sample per cell keyed by its
// 9-digit row index (<key>.values.npy, <key>.genes.npy: NPY 1.0 files in the
// archive's data and col_ptr dtypes; <key>.json: {"row", "block",
// "n_genes"}), and fold "scdlmeta", one shard holding every other file of
// the archive. Archive mode writes fold "scdl", every file as a member under
// its relative path. Each fold gets its .taridx. Nothing is left behind on
// failure; a directory already holding a fold of those names is refused.
func SCDLToTar(ctx context.Context, a *scdl.Archive, opts SCDLExportOptions) (*SCDLExportStats, error) {
	if opts.Mode == "" {
		opts.Mode = SCDLModeCells
	}
	st := &SCDLExportStats{Mode: opts.Mode, Cells: a.NumRows(), NNZ: a.NNZ()}
	switch opts.Mode {
	case SCDLModeCells:
		if opts.Fold == "" {
			opts.Fold = SCDLCellsFold
		}
		if opts.Fold == SCDLMetaFold {
			return nil, fmt.Errorf("fold name %q is taken by the archive's other files", SCDLMetaFold)
		}
		if !opts.Replace {
			if err := refuseExistingFolds(opts.Dir, opts.Fold, SCDLMetaFold); err != nil {
				return nil, err
			}
		}
		meta, err := newSCDLFileSource(a.Dir(), scdlMetaFiles(a))
		if err != nil {
			return nil, err
		}
		// Both folds are staged whole before either is renamed into place,
		// so that a failure or a kill leaves neither under its final names.
		metaFold, err := StageFold(ctx, meta, FoldOptions{Dir: opts.Dir, Fold: SCDLMetaFold, ShardSize: math.MaxInt64, Workers: 1, Replace: opts.Replace})
		if err != nil {
			return nil, err
		}
		maxMembers := 0
		if opts.CellsPerShard > 0 {
			maxMembers = 3 * opts.CellsPerShard
		}
		cellsFold, err := StageFold(ctx, newSCDLCellSource(a), FoldOptions{Dir: opts.Dir, Fold: opts.Fold,
			ShardSize: opts.ShardSize, MaxMembers: maxMembers, Workers: opts.Workers, Progress: opts.Progress, Replace: opts.Replace})
		if err != nil {
			metaFold.Abort()
			return nil, err
		}
		folds, err := CommitFolds(metaFold, cellsFold)
		if err != nil {
			return nil, err
		}
		st.Meta, st.Fold = folds[0], folds[1]
	case SCDLModeArchive:
		if opts.CellsPerShard > 0 {
			return nil, fmt.Errorf("cells per shard apply to cells mode only")
		}
		if opts.Fold == "" {
			opts.Fold = SCDLArchiveFold
		}
		if !opts.Replace {
			if err := refuseExistingFolds(opts.Dir, opts.Fold); err != nil {
				return nil, err
			}
		}
		src, err := newSCDLFileSource(a.Dir(), a.Files())
		if err != nil {
			return nil, err
		}
		st.Fold, err = WriteFold(ctx, src, FoldOptions{Dir: opts.Dir, Fold: opts.Fold, ShardSize: opts.ShardSize,
			Workers: 1, Progress: opts.Progress, Replace: opts.Replace})
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("SCDL mode %q: want %s or %s", opts.Mode, SCDLModeCells, SCDLModeArchive)
	}
	return st, nil
}

// SCDLMetaPrefix is the directory that holds the scdlmeta fold's files
// where an archive's cells and other files share one namespace: a Barecat
// archive, a TBL file, a single fold of tar shards.
const SCDLMetaPrefix = SCDLMetaFold + "/"

// NewSCDLSource reads an opened SCDL archive as one source of rows, for
// targets of one namespace. Cells mode gives every file but the three
// arrays under SCDLMetaPrefix, then three rows per cell as SCDLToTar
// names them; archive mode gives every file under its path. ToSCDL
// rebuilds the archive, byte for byte, from either.
func NewSCDLSource(a *scdl.Archive, mode string) (PayloadSource, error) {
	switch mode {
	case SCDLModeCells, "":
		meta, err := newSCDLFileSource(a.Dir(), scdlMetaFiles(a))
		if err != nil {
			return nil, err
		}
		return NewConcat(Part{Source: meta, Prefix: SCDLMetaPrefix}, Part{Source: newSCDLCellSource(a)}), nil
	case SCDLModeArchive:
		return newSCDLFileSource(a.Dir(), a.Files())
	}
	return nil, fmt.Errorf("SCDL mode %q: want %s or %s", mode, SCDLModeCells, SCDLModeArchive)
}

// scdlMetaFiles are the files of the archive that the cells do not make.
func scdlMetaFiles(a *scdl.Archive) []string {
	var files []string
	for _, f := range a.Files() {
		if !scdlArrays[f] {
			files = append(files, f)
		}
	}
	return files
}

// refuseExistingFolds fails when dir already holds shards or an index of
// one of the folds: new shards would mix with stale ones.
func refuseExistingFolds(dir string, folds ...string) error {
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	existing, err := taridx.Discover(dir)
	if err != nil {
		return err
	}
	for _, want := range folds {
		for _, f := range existing {
			if f.Name == want {
				return fmt.Errorf("%s already holds fold %q (%d shards, %s...): remove them first, or write elsewhere", dir, want, len(f.Shards), filepath.Base(f.Shards[0]))
			}
		}
		if _, err := os.Lstat(filepath.Join(dir, want+".taridx")); err == nil {
			return fmt.Errorf("%s already holds %s.taridx: remove it first, or write elsewhere", dir, want)
		}
	}
	return nil
}

// scdlFileSource lists files of an archive directory as one shard of rows;
// OpenPayload opens them.
type scdlFileSource struct {
	dir   string
	files []string
	rows  []Row
}

func newSCDLFileSource(dir string, files []string) (*scdlFileSource, error) {
	s := &scdlFileSource{dir: dir, files: files}
	for i, f := range files {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		s.rows = append(s.rows, Row{Name: []byte(f), Kind: KindFile, Size: st.Size(), Mode: int64(st.Mode().Perm()),
			ModTime: st.ModTime().Unix(), DataFile: i, Offset: -1})
	}
	return s, nil
}

func (s *scdlFileSource) NumShards() int       { return 1 }
func (s *scdlFileSource) ShardName(int) string { return s.dir }
func (s *scdlFileSource) Scan(ctx context.Context, _ int, emit func([]Row) error) error {
	if len(s.rows) == 0 {
		return nil
	}
	return emit(append([]Row(nil), s.rows...))
}

// OpenPayload opens the file; the fold writer reads exactly its size at
// the scan and closes it.
func (s *scdlFileSource) OpenPayload(r *Row) (io.Reader, error) {
	return os.Open(filepath.Join(s.dir, filepath.FromSlash(s.files[r.DataFile])))
}

// Cells per Run shard, and per batch handed to the writer. A Run shard
// must hold many more batches than Run queues per shard (8): a worker runs
// ahead of the writer only until its own shard's queue is full, and if
// whole shards fit in their queues the workers would buffer the dataset.
// Memory stays at about workers x 9 batches of 512 cells (a few MB each).
// (Variables for tests.)
var (
	scdlBatchCells = 512
	scdlChunkCells = 64 * scdlBatchCells
)

// scdlCellSource makes three rows per cell: values, genes, json. Its Run
// shards are chunks of cells, so that workers build the NPY bytes in
// parallel.
type scdlCellSource struct {
	a      *scdl.Archive
	blocks []scdl.Block
}

func newSCDLCellSource(a *scdl.Archive) *scdlCellSource {
	return &scdlCellSource{a: a, blocks: a.Blocks()}
}

func (s *scdlCellSource) NumShards() int {
	return (s.a.NumRows() + scdlChunkCells - 1) / scdlChunkCells
}

func (s *scdlCellSource) ShardName(shard int) string {
	from := shard * scdlChunkCells
	return fmt.Sprintf("cells %d-%d", from, min(from+scdlChunkCells, s.a.NumRows())-1)
}

func (s *scdlCellSource) OpenPayload(r *Row) (io.Reader, error) {
	return nil, fmt.Errorf("cell member %s has no inline payload", r.Name)
}

// CellKey is the sample key of row i: its index, zero-padded to 9 digits.
func CellKey(i int) string { return string(appendCellKey(nil, i)) }

func appendCellKey(b []byte, i int) []byte {
	var d [20]byte
	s := strconv.AppendInt(d[:0], int64(i), 10)
	for k := len(s); k < 9; k++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// cellExts are a cell's members, in the order they come.
var cellExts = []string{".values.npy", ".genes.npy", ".json"}

// appendCellMember appends one member of cell i: its values or gene
// indices as an NPY file of the archive's dtype, or its JSON record.
func appendCellMember(b []byte, ext string, i, block, nGenes int, values, genes []byte, dt, ct scdl.DType) []byte {
	switch ext {
	case ".values.npy":
		b, _ = scdl.AppendNPYHeader(b, dt, len(values)/dt.ItemSize())
		return append(b, values...)
	case ".genes.npy":
		b, _ = scdl.AppendNPYHeader(b, ct, len(genes)/ct.ItemSize())
		return append(b, genes...)
	}
	b = append(b, `{"row": `...)
	b = strconv.AppendInt(b, int64(i), 10)
	b = append(b, `, "block": `...)
	b = strconv.AppendInt(b, int64(block), 10)
	b = append(b, `, "n_genes": `...)
	b = strconv.AppendInt(b, int64(nGenes), 10)
	return append(b, '}')
}

// SCDLMember returns the bytes of the row of that name NewSCDLSource gives
// in cells mode: a cell's member (<row>.values.npy, <row>.genes.npy,
// <row>.json) or one of the other files, under SCDLMetaPrefix. A name it
// does not give is fs.ErrNotExist.
func SCDLMember(a *scdl.Archive, name string) ([]byte, error) {
	if rel, ok := strings.CutPrefix(name, SCDLMetaPrefix); ok {
		if !slices.Contains(scdlMetaFiles(a), rel) {
			return nil, fmt.Errorf("%s: %s: %w", a.Dir(), name, fs.ErrNotExist)
		}
		return os.ReadFile(filepath.Join(a.Dir(), filepath.FromSlash(rel)))
	}
	row, part, ok := cellsName([]byte(name))
	if !ok || row >= int64(a.NumRows()) || name != CellKey(int(row))+cellExts[strings.IndexByte("vgj", part)] {
		return nil, fmt.Errorf("%s: %s: %w", a.Dir(), name, fs.ErrNotExist)
	}
	i := int(row)
	values, genes, err := a.Row(i)
	if err != nil {
		return nil, err
	}
	block, nGenes := a.RowBlock(i)
	if block < 0 {
		block = len(a.Blocks())
	}
	return appendCellMember(nil, cellExts[strings.IndexByte("vgj", part)], i, block, nGenes, values, genes, a.DataDType(), a.ColPtrDType()), nil
}

func (s *scdlCellSource) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	a := s.a
	from := shard * scdlChunkCells
	to := min(from+scdlChunkCells, a.NumRows())
	dt, ct := a.DataDType(), a.ColPtrDType()
	it := a.Rows(from, to)
	block := 0
	for block < len(s.blocks) && s.blocks[block].End <= from {
		block++
	}
	var rows []Row
	var arena, names []byte
	flush := func() error {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := emit(rows)
		rows, arena, names = nil, nil, nil
		return err
	}
	for it.Next() {
		i := it.Row()
		if rows == nil {
			rows = make([]Row, 0, 3*scdlBatchCells)
			// Room for a batch of cells of about this one's size.
			arena = make([]byte, 0, scdlBatchCells*(384+len(it.Values())+len(it.Genes())))
			names = make([]byte, 0, scdlBatchCells*48)
		}
		for block < len(s.blocks) && s.blocks[block].End <= i {
			block++
		}
		nGenes := 0
		if block < len(s.blocks) {
			nGenes = s.blocks[block].NGenes
		}
		for _, ext := range cellExts {
			start := len(names)
			names = appendCellKey(names, i)
			names = append(names, ext...)
			name := names[start:len(names):len(names)]
			start = len(arena)
			arena = appendCellMember(arena, ext, i, block, nGenes, it.Values(), it.Genes(), dt, ct)
			inline := arena[start:len(arena):len(arena)]
			rows = append(rows, Row{Name: name, Kind: KindFile, Size: int64(len(inline)), Mode: defaultFileMode,
				Offset: -1, Inline: inline})
		}
		if len(rows) >= 3*scdlBatchCells {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := it.Err(); err != nil {
		return err
	}
	if len(rows) > 0 {
		return flush()
	}
	return nil
}

// scdlOutDir is an archive directory built under a temporary name beside
// its target and renamed into place when complete.
type scdlOutDir struct {
	final, tmp string
	done       bool
}

func newSCDLOutDir(final string) (*scdlOutDir, error) {
	final = filepath.Clean(final)
	if _, err := os.Lstat(final); err == nil {
		return nil, fmt.Errorf("%s already exists: the SCDL archive is written as a new directory", final)
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
	return &scdlOutDir{final: final, tmp: tmp}, nil
}

// create makes the file rel (slash-separated, inside the archive).
func (o *scdlOutDir) create(rel string) (*os.File, error) {
	if !filepath.IsLocal(filepath.FromSlash(rel)) || strings.Contains(rel, "\\") {
		return nil, fmt.Errorf("%q is not a path inside the archive", rel)
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
func (o *scdlOutDir) renameErr(err error) error {
	var e *scdl.Error
	if errors.As(err, &e) && strings.HasPrefix(e.Path, o.tmp) {
		e.Path = o.final + strings.TrimPrefix(e.Path, o.tmp)
	}
	return err
}

func (o *scdlOutDir) commit() error {
	if err := os.Chmod(o.tmp, 0o755); err != nil {
		return err
	}
	if _, err := os.Lstat(o.final); err == nil {
		return fmt.Errorf("%s appeared while the archive was written", o.final)
	}
	if err := os.Rename(o.tmp, o.final); err != nil {
		return fmt.Errorf("writing %s: %w", o.final, err)
	}
	o.done = true
	if d, err := os.Open(filepath.Dir(o.final)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

func (o *scdlOutDir) abort() {
	if !o.done {
		o.done = true
		os.RemoveAll(o.tmp)
	}
}

// maxOf is the largest value of an unsigned dtype.
func maxOf(d scdl.DType) uint64 {
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

func newBufWriter(w io.Writer) *bufWriter { return &bufWriter{w: w, buf: make([]byte, 0, 1<<20)} }

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

func (b *bufWriter) putUint(d scdl.DType, v uint64) {
	if len(b.buf)+8 > cap(b.buf) {
		b.flush()
	}
	switch d {
	case scdl.Uint8:
		b.buf = append(b.buf, byte(v))
	case scdl.Uint16:
		b.buf = binary.LittleEndian.AppendUint16(b.buf, uint16(v))
	case scdl.Uint32:
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
