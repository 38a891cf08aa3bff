package scdl

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/dataset"
)

// An archive as rows: in cells mode, every file but the three arrays
// under MetaPrefix, then three rows a cell (<row>.values.npy,
// <row>.genes.npy, <row>.json, built on the workers); in archive mode,
// every file under its path. WriteRows rebuilds the archive from either.
const (
	ModeCells   = "cells"
	ModeArchive = "archive"
)

// MetaPrefix is the directory that holds the files beside the cells (every
// file but the three arrays) where the cells and those files share one
// namespace.
const MetaPrefix = "scdlmeta/"

// rowFileMode is the mode of the rows a source makes: a cell's members.
const rowFileMode = 0o644

// arrayFileSet are the files rebuilt from the cells, not kept beside them.
var arrayFileSet = map[string]bool{DataFile: true, RowPtrFile: true, ColPtrFile: true}

// Cells per batch handed to the writer, and per Run shard, by default. A
// Run shard must hold many more batches than Run queues per shard (8): a
// worker runs ahead of the writer only until its own shard's queue is
// full, and if whole shards fit in their queues the workers would buffer
// the dataset. Memory stays at about workers x 9 batches of 512 cells (a
// few MB each).
const (
	DefaultBatchCells = 512
	DefaultChunkCells = 64 * DefaultBatchCells
)

// SourceOptions tune NewSource.
type SourceOptions struct {
	Mode string // ModeCells (default) or ModeArchive
	// BatchCells and ChunkCells are the cells of a batch and of a Run
	// shard of cells (0: DefaultBatchCells, DefaultChunkCells).
	BatchCells, ChunkCells int
}

// NewSource reads an opened archive as one source of rows, for targets
// of one namespace: in cells mode, every file but the three arrays under
// MetaPrefix, then three rows per cell; in archive mode, every file under
// its path. WriteRows rebuilds the archive, byte for byte, from either.
func NewSource(a *Archive, opts SourceOptions) (dataset.PayloadSource, error) {
	switch opts.Mode {
	case ModeCells, "":
		meta, err := NewFileSource(a.Dir(), OtherFiles(a))
		if err != nil {
			return nil, err
		}
		return dataset.NewConcat(dataset.Part{Source: meta, Prefix: MetaPrefix}, dataset.Part{Source: NewCellSource(a, opts)}), nil
	case ModeArchive:
		return NewFileSource(a.Dir(), a.Files())
	}
	return nil, fmt.Errorf("SCDL mode %q: want %s or %s", opts.Mode, ModeCells, ModeArchive)
}

// OtherFiles are the files of the archive that the cells do not make:
// every file but the three arrays.
func OtherFiles(a *Archive) []string {
	var files []string
	for _, f := range a.Files() {
		if !arrayFileSet[f] {
			files = append(files, f)
		}
	}
	return files
}

// fileSource lists files of an archive directory as one shard of rows;
// OpenPayload opens them.
type fileSource struct {
	dir   string
	files []string
	rows  []dataset.Row
}

// NewFileSource lists files of an archive directory (slash-separated,
// relative to dir) as one shard of rows, each read by OpenPayload.
func NewFileSource(dir string, files []string) (dataset.PayloadSource, error) {
	s := &fileSource{dir: dir, files: files}
	for i, f := range files {
		st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		if err != nil {
			return nil, err
		}
		s.rows = append(s.rows, dataset.Row{Name: []byte(f), Kind: dataset.KindFile, Size: st.Size(), Mode: int64(st.Mode().Perm()),
			ModTime: st.ModTime().Unix(), DataFile: i, Offset: -1})
	}
	return s, nil
}

func (s *fileSource) NumShards() int       { return 1 }
func (s *fileSource) ShardName(int) string { return s.dir }
func (s *fileSource) Scan(ctx context.Context, _ int, emit func([]dataset.Row) error) error {
	if len(s.rows) == 0 {
		return nil
	}
	return emit(append([]dataset.Row(nil), s.rows...))
}

// OpenPayload opens the file; a sink reads exactly its size at the scan
// and closes it.
func (s *fileSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return os.Open(filepath.Join(s.dir, filepath.FromSlash(s.files[r.DataFile])))
}

// cellSource makes three rows per cell: values, genes, json. Its Run
// shards are chunks of cells, so that workers build the NPY bytes in
// parallel.
type cellSource struct {
	a                 *Archive
	blocks            []Block
	batch, chunkCells int // cells a batch, cells a Run shard
}

// NewCellSource reads the cells of an archive as rows, three a cell
// (cells mode without the files beside them).
func NewCellSource(a *Archive, opts SourceOptions) dataset.PayloadSource {
	return &cellSource{a: a, blocks: a.Blocks(), batch: cmp.Or(opts.BatchCells, DefaultBatchCells), chunkCells: cmp.Or(opts.ChunkCells, DefaultChunkCells)}
}

func (s *cellSource) NumShards() int {
	return (s.a.NumRows() + s.chunkCells - 1) / s.chunkCells
}

func (s *cellSource) ShardName(shard int) string {
	from := shard * s.chunkCells
	return fmt.Sprintf("cells %d-%d", from, min(from+s.chunkCells, s.a.NumRows())-1)
}

func (s *cellSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
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
func appendCellMember(b []byte, ext string, i, block, nGenes int, values, genes []byte, dt, ct DType) []byte {
	switch ext {
	case ".values.npy":
		b, _ = AppendNPYHeader(b, dt, len(values)/dt.ItemSize())
		return append(b, values...)
	case ".genes.npy":
		b, _ = AppendNPYHeader(b, ct, len(genes)/ct.ItemSize())
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

// Member returns the bytes of the row of that name NewSource gives
// in cells mode: a cell's member (<row>.values.npy, <row>.genes.npy,
// <row>.json) or one of the other files, under MetaPrefix. A name it
// does not give is fs.ErrNotExist.
func Member(a *Archive, name string) ([]byte, error) {
	if rel, ok := strings.CutPrefix(name, MetaPrefix); ok {
		if !slices.Contains(OtherFiles(a), rel) {
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

func (s *cellSource) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	a := s.a
	from := shard * s.chunkCells
	to := min(from+s.chunkCells, a.NumRows())
	dt, ct := a.DataDType(), a.ColPtrDType()
	it := a.Rows(from, to)
	block := 0
	for block < len(s.blocks) && s.blocks[block].End <= from {
		block++
	}
	var rows []dataset.Row
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
			rows = make([]dataset.Row, 0, 3*s.batch)
			// Room for a batch of cells of about this one's size.
			arena = make([]byte, 0, s.batch*(384+len(it.Values())+len(it.Genes())))
			names = make([]byte, 0, s.batch*48)
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
			rows = append(rows, dataset.Row{Name: name, Kind: dataset.KindFile, Size: int64(len(inline)), Mode: rowFileMode,
				Offset: -1, Inline: inline})
		}
		if len(rows) >= 3*s.batch {
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

// IsCellMember tells whether a name (a leading "./" aside) is a cell's
// member: <row>.values.npy, <row>.genes.npy or <row>.json.
func IsCellMember(name []byte) bool {
	_, _, ok := cellsName(trimDot(name))
	return ok
}
