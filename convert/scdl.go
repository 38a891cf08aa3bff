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

	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tarscan"
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
		var metaFiles []string
		for _, f := range a.Files() {
			if !scdlArrays[f] {
				metaFiles = append(metaFiles, f)
			}
		}
		meta, err := newSCDLFileSource(a.Dir(), metaFiles)
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
		n := len(it.Values()) / dt.ItemSize()
		add := func(ext string, build func([]byte) []byte) {
			start := len(names)
			names = appendCellKey(names, i)
			names = append(names, ext...)
			name := names[start:len(names):len(names)]
			start = len(arena)
			arena = build(arena)
			inline := arena[start:len(arena):len(arena)]
			rows = append(rows, Row{Name: name, Kind: KindFile, Size: int64(len(inline)), Mode: defaultFileMode,
				Offset: -1, Inline: inline})
		}
		add(".values.npy", func(b []byte) []byte {
			b, _ = scdl.AppendNPYHeader(b, dt, n)
			return append(b, it.Values()...)
		})
		add(".genes.npy", func(b []byte) []byte {
			b, _ = scdl.AppendNPYHeader(b, ct, n)
			return append(b, it.Genes()...)
		})
		add(".json", func(b []byte) []byte {
			b = append(b, `{"row": `...)
			b = strconv.AppendInt(b, int64(i), 10)
			b = append(b, `, "block": `...)
			b = strconv.AppendInt(b, int64(block), 10)
			b = append(b, `, "n_genes": `...)
			b = strconv.AppendInt(b, int64(nGenes), 10)
			return append(b, '}')
		})
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

// SCDLImportOptions tune TarToSCDL.
type SCDLImportOptions struct {
	// Fold is the fold to read: "" finds fold "scdl" (archive mode) or
	// "cells" (with "scdlmeta" when present).
	Fold     string
	Workers  int
	Progress func(Progress)
}

// SCDLImportStats describes a rebuilt archive.
type SCDLImportStats struct {
	Output string `json:"output"`
	Mode   string `json:"mode"` // cells or archive
	Fold   string `json:"fold"`
	Cells  int    `json:"cells"`
	NNZ    uint64 `json:"nnz"`
	Files  int    `json:"files"`
	// Fresh: no scdlmeta fold, so a new header, metadata.json,
	// version.json and a var_features index of one block were written.
	Fresh bool `json:"fresh"`
}

// TarToSCDL rebuilds an SCDL archive at out (a directory that must not
// exist) from the folds SCDLToTar writes in dir. With fold "scdlmeta" (or
// in archive mode) every file is byte-identical to the original's; cells
// without it (another tool's, in the same layout) make a fresh archive of
// version 0.1.0 without feature indices. The result is checked as
// scdl.Open checks an archive before it appears under out; on any error
// nothing does.
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
	cells, err := foldHoldsCells(f.Shards)
	if err != nil {
		return nil, err
	}
	st := &SCDLImportStats{Output: out, Fold: pick}
	o, err := newSCDLOutDir(out)
	if err != nil {
		return nil, err
	}
	defer o.abort()
	meta, haveMeta := byName[SCDLMetaFold]
	switch {
	case !cells:
		st.Mode = SCDLModeArchive
		if err := copyFoldFiles(ctx, f.Shards, o, nil); err != nil {
			return nil, err
		}
	case haveMeta:
		st.Mode = SCDLModeCells
		if err := cellsWithMeta(ctx, f.Shards, meta.Shards, o, opts, st); err != nil {
			return nil, err
		}
	default:
		st.Mode, st.Fresh = SCDLModeCells, true
		o.abort() // scdl.Writer makes its own temporary directory
		if err := freshFromCells(ctx, f.Shards, out, opts, st); err != nil {
			return nil, err
		}
		st.Files = 6
		return st, nil
	}
	a, err := scdl.Open(o.tmp)
	if err != nil {
		return nil, o.renameErr(err)
	}
	st.Cells, st.NNZ, st.Files = a.NumRows(), a.NNZ(), len(a.Files())
	a.Close()
	if err := o.commit(); err != nil {
		return nil, err
	}
	return st, nil
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
				_, _, ok := cellsName(m.Name)
				return ok, nil
			}
		}
		f.Close()
	}
	return true, nil // no members: refused as a fold of no cells
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

// copyFoldFiles writes every regular member of the shards as a file of the
// archive; check, if set, refuses names that do not belong there.
func copyFoldFiles(ctx context.Context, shards []string, o *scdlOutDir, check func(name string) error) error {
	for _, sh := range shards {
		if err := copyShardFiles(ctx, sh, o, check); err != nil {
			return err
		}
	}
	return nil
}

func copyShardFiles(ctx context.Context, sh string, o *scdlOutDir, check func(name string) error) error {
	t, err := tarscan.Open(sh, tarscan.Options{})
	if err != nil {
		return err
	}
	defer t.Close()
	src, err := os.Open(sh)
	if err != nil {
		return err
	}
	defer src.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		m, err := t.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case m.Typeflag == tarscan.TypeDir:
			continue
		case !m.IsRegular():
			return fmt.Errorf("%s: offset %d: member %q is not a regular file", sh, m.HeaderOffset, m.Name)
		}
		name := strings.TrimPrefix(string(m.Name), "./")
		if check != nil {
			if err := check(name); err != nil {
				return fmt.Errorf("%s: offset %d: %w", sh, m.HeaderOffset, err)
			}
		}
		out, err := o.create(name)
		if err != nil {
			return fmt.Errorf("%s: offset %d: %w", sh, m.HeaderOffset, err)
		}
		// A LimitedReader over an *os.File lets the kernel copy
		// (copy_file_range) where it can.
		if _, err := src.Seek(m.DataOffset, io.SeekStart); err != nil {
			out.Close()
			return err
		}
		n, err := io.Copy(out, io.LimitReader(src, m.Size))
		if err == nil && n != m.Size {
			err = fmt.Errorf("%s: offset %d: %q: the shard ends after %d of %d bytes", sh, m.HeaderOffset, m.Name, n, m.Size)
		}
		if cerr := closeFile(out); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
}

// cellPart is one parsed member of a cells fold.
type cellPart struct {
	row    int64
	part   byte       // 'v', 'g' or 'j'
	dtype  scdl.DType // values and genes: the NPY dtype (signed genes: see signed)
	signed bool       // genes stored as signed integers ('<i8', ...)
	n      int        // elements
	data   []byte     // raw little-endian elements
	nGenes int        // json: n_genes, -1 when absent
	where  string     // shard and offset, for errors
}

// cellReader is the Sink half that parses cell members on the workers.
type cellReader struct {
	shards []string
}

func (c *cellReader) Prepare(b *Batch) error {
	sh := c.shards[b.Shard]
	lo, hi := int64(math.MaxInt64), int64(0)
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind == KindDir {
			continue
		}
		if r.Kind != KindFile {
			return fmt.Errorf("%s: offset %d: member %q is not a regular file", sh, r.Offset, r.Name)
		}
		lo, hi = min(lo, r.DataOffset), max(hi, r.DataOffset+r.Size)
	}
	if hi <= lo {
		b.Prep = []cellPart(nil)
		return nil
	}
	f, err := os.Open(sh)
	if err != nil {
		return err
	}
	defer f.Close()
	// The batch's members are consecutive: one read covers them all.
	span := make([]byte, hi-lo)
	if n, err := f.ReadAt(span, lo); n != len(span) {
		return fmt.Errorf("%s: reading %d bytes at %d: %v", sh, len(span), lo, err)
	}
	parts := make([]cellPart, 0, len(b.Rows))
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind == KindDir {
			continue
		}
		where := fmt.Sprintf("%s: offset %d: %s", sh, r.Offset, r.Name)
		row, part, ok := cellsName(r.Name)
		if !ok {
			return fmt.Errorf("%s: not a cell's member (<row>.values.npy, <row>.genes.npy or <row>.json)", where)
		}
		p := cellPart{row: row, part: part, where: where, nGenes: -1}
		payload := span[r.DataOffset-lo : r.DataOffset-lo+r.Size]
		if part == 'j' {
			var j struct {
				Row    *int64 `json:"row"`
				NGenes *int   `json:"n_genes"`
			}
			if err := json.Unmarshal(payload, &j); err != nil {
				return fmt.Errorf("%s: %v", where, err)
			}
			if j.Row != nil && *j.Row != row {
				return fmt.Errorf("%s: \"row\" is %d, the key says %d", where, *j.Row, row)
			}
			if j.NGenes != nil {
				p.nGenes = *j.NGenes
			}
		} else if err := parseCellNPY(&p, payload); err != nil {
			return fmt.Errorf("%s: %v", where, err)
		}
		parts = append(parts, p)
	}
	b.Prep = parts
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
		return 0, fmt.Errorf("%s: gene index %d is negative", p.where, int64(v))
	}
	return v, nil
}

// cellAssembler groups parts into cells in order and hands each complete
// cell to done.
type cellAssembler struct {
	cellReader
	next         int64 // the row the next cell must have
	cur          int64
	values       *cellPart
	genes        *cellPart
	json         *cellPart
	done         func(values, genes, json *cellPart) error
	lastWhere    string
	partsPending bool
}

func (c *cellAssembler) EndShard(int) error { return nil }

func (c *cellAssembler) Write(b *Batch) error {
	parts, _ := b.Prep.([]cellPart)
	for i := range parts {
		p := &parts[i]
		if c.partsPending && p.row != c.cur {
			if err := c.flush(); err != nil {
				return err
			}
		}
		if !c.partsPending {
			if p.row != c.next {
				if p.row < c.next {
					return fmt.Errorf("%s: cell %d comes after cell %d: %w", p.where, p.row, c.next-1, ErrCellOrder)
				}
				return fmt.Errorf("%s: cell %d, but cell %d is missing", p.where, p.row, c.next)
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
			return fmt.Errorf("%s: a second member of this kind for cell %d", p.where, p.row)
		}
		*slot = p
		c.lastWhere = p.where
	}
	return nil
}

// flush completes the pending cell.
func (c *cellAssembler) flush() error {
	if !c.partsPending {
		return nil
	}
	switch {
	case c.values == nil:
		return fmt.Errorf("%s: cell %d has no .values.npy", c.lastWhere, c.cur)
	case c.genes == nil:
		return fmt.Errorf("%s: cell %d has no .genes.npy", c.lastWhere, c.cur)
	case c.values.n != c.genes.n:
		return fmt.Errorf("%s: cell %d has %d values but %d gene indices", c.genes.where, c.cur, c.values.n, c.genes.n)
	}
	if err := c.done(c.values, c.genes, c.json); err != nil {
		return err
	}
	c.values, c.genes, c.json, c.partsPending = nil, nil, nil, false
	c.next++
	return nil
}

// cellsWithMeta rebuilds the original archive: scdlmeta's files as they
// are, the three arrays from the cells in the header's dtypes.
func cellsWithMeta(ctx context.Context, cellShards, metaShards []string, o *scdlOutDir, opts SCDLImportOptions, st *SCDLImportStats) error {
	err := copyFoldFiles(ctx, metaShards, o, func(name string) error {
		if scdlArrays[name] {
			return fmt.Errorf("fold %s holds %s, which the cells make", SCDLMetaFold, name)
		}
		return nil
	})
	if err != nil {
		return err
	}
	hpath := filepath.Join(o.tmp, scdl.HeaderFile)
	hb, err := os.ReadFile(hpath)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("fold %s (%s) has no %s", SCDLMetaFold, metaShards[0], scdl.HeaderFile)
	}
	if err != nil {
		return err
	}
	h, err := scdl.DecodeHeader(hb)
	if err != nil {
		var e *scdl.Error
		if errors.As(err, &e) {
			e.Path = SCDLMetaFold + ":" + scdl.HeaderFile
		}
		return err
	}
	var dataDT, rowDT, colDT scdl.DType
	var nrows, nnz uint64
	for _, a := range h.Arrays {
		switch a.Name {
		case scdl.ArrayData:
			dataDT, nnz = a.DType, a.Length
		case scdl.ArrayRowPtr:
			rowDT, nrows = a.DType, a.Length-1
		case scdl.ArrayColPtr:
			colDT = a.DType
		}
	}
	if !dataDT.Numeric() || !rowDT.Unsigned() || !colDT.Unsigned() {
		return fmt.Errorf("%s:%s: arrays of dtypes DATA %v, ROWPTR %v, COLPTR %v: want a numeric one and two unsigned", SCDLMetaFold, scdl.HeaderFile, dataDT, rowDT, colDT)
	}
	type out struct {
		f *os.File
		w *bufWriter
	}
	var files [3]out
	for i, name := range []string{scdl.DataFile, scdl.RowPtrFile, scdl.ColPtrFile} {
		f, err := o.create(name)
		if err != nil {
			return err
		}
		files[i] = out{f, newBufWriter(f)}
		defer f.Close()
	}
	data, rowPtr, colPtr := files[0].w, files[1].w, files[2].w
	var total uint64
	putRow := func(v uint64, where string) error {
		if v > maxOf(rowDT) {
			return fmt.Errorf("%s: %d values do not fit row_ptr's dtype %v (the header's)", where, v, rowDT)
		}
		rowPtr.putUint(rowDT, v)
		return nil
	}
	putRow(0, "")
	colMax := maxOf(colDT)
	asm := &cellAssembler{cellReader: cellReader{shards: cellShards}}
	asm.done = func(v, g, _ *cellPart) error {
		if v.dtype != dataDT {
			return fmt.Errorf("%s: values of dtype %v, but the archive's data dtype is %v", v.where, v.dtype, dataDT)
		}
		data.write(v.data)
		if g.dtype == colDT && !g.signed {
			colPtr.write(g.data)
		} else {
			for i := range g.n {
				x, err := g.geneAt(i)
				if err != nil {
					return err
				}
				if x > colMax {
					return fmt.Errorf("%s: gene index %d does not fit col_ptr's dtype %v (the header's)", g.where, x, colDT)
				}
				colPtr.putUint(colDT, x)
			}
		}
		total += uint64(v.n)
		return putRow(total, v.where)
	}
	if err := Run(ctx, NewTarShards(cellShards, tarscan.Options{}), asm, Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return err
	}
	if err := asm.flush(); err != nil {
		return err
	}
	switch {
	case asm.next == 0:
		return fmt.Errorf("%s: the cells fold holds no cells: %w", cellShards[0], scdl.ErrEmpty)
	case uint64(asm.next) != nrows || total != nnz:
		return fmt.Errorf("the cells fold holds %d cells and %d values, but %s's header.sch describes %d cells and %d values", asm.next, total, SCDLMetaFold, nrows, nnz)
	}
	for _, f := range files {
		if err := f.w.flush(); err != nil {
			return err
		}
		if err := closeFile(f.f); err != nil {
			return err
		}
	}
	return nil
}

// freshFromCells writes a new archive from cells without scdlmeta: a first
// pass finds the dtypes and the number of genes, a second writes the rows.
func freshFromCells(ctx context.Context, cellShards []string, out string, opts SCDLImportOptions, st *SCDLImportStats) error {
	var dataDT scdl.DType
	var firstWhere string
	var nnz, maxGene uint64
	var anyGene bool
	nGenes := 0
	asm := &cellAssembler{cellReader: cellReader{shards: cellShards}}
	asm.done = func(v, g, j *cellPart) error {
		if dataDT == 0 {
			dataDT, firstWhere = v.dtype, v.where
		} else if v.dtype != dataDT {
			return fmt.Errorf("%s: values of dtype %v, but %s has %v: an archive has one data dtype", v.where, v.dtype, firstWhere, dataDT)
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
	if err := Run(ctx, NewTarShards(cellShards, tarscan.Options{}), asm, Options{Workers: opts.Workers}); err != nil {
		return err
	}
	if err := asm.flush(); err != nil {
		return err
	}
	switch {
	case asm.next == 0:
		return fmt.Errorf("%s: no cells: bionemo-scdl cannot write or open an archive of 0 cells: %w", cellShards[0], scdl.ErrEmpty)
	case nnz == 0:
		return fmt.Errorf("%s: %d cells but no non-zero value: bionemo-scdl cannot write or open an archive of 0 values: %w", cellShards[0], asm.next, scdl.ErrEmpty)
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
	features, err := scdl.OneBlockFeatureIndex(scdl.VarFeatures, int(asm.next), names)
	if err != nil {
		return err
	}
	var rels []string
	for _, f := range features {
		rels = append(rels, f.Rel)
	}
	w, err := scdl.Create(out, scdl.WriterOptions{DataDType: dataDT, GeneDType: scdl.Uint64, NGenes: []int{nGenes},
		FeatureIndices: []scdl.FeatureIndexInfo{{Name: scdl.VarFeatures, Length: uint64(asm.next), DType: scdl.StringArray, Files: rels}}})
	if err != nil {
		return err
	}
	defer w.Abort()
	var genes []byte
	asm2 := &cellAssembler{cellReader: cellReader{shards: cellShards}}
	asm2.done = func(v, g, _ *cellPart) error {
		genes = genes[:0]
		for i := range g.n {
			x, _ := g.geneAt(i)
			genes = binary.LittleEndian.AppendUint64(genes, x)
		}
		return w.AddRow(v.data, genes)
	}
	if err := Run(ctx, NewTarShards(cellShards, tarscan.Options{}), asm2, Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return err
	}
	if err := asm2.flush(); err != nil {
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
	st.Cells, st.NNZ = int(asm.next), nnz
	return nil
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
