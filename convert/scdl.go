package convert

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
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

// SCDLExportOptions tune SCDLToTar.
type SCDLExportOptions struct {
	Dir  string
	Mode string // scdl.ModeCells (default) or scdl.ModeArchive
	// Fold names the main fold (default "cells", or "scdl" in archive mode).
	Fold      string
	ShardSize int64 // default 1 GiB
	// CellsPerShard, in cells mode, also starts a new shard after that many
	// cells.
	CellsPerShard int
	Workers       int
	Progress      func(dataset.Progress)
	// Replace lets the folds written replace earlier folds of the same
	// names in Dir, once complete (FoldOptions.Replace); without it, an
	// existing fold is refused.
	Replace bool
}

// SCDLExportStats describes an export.
type SCDLExportStats struct {
	Mode  string           `json:"mode"`
	Cells int              `json:"cells"`
	NNZ   uint64           `json:"nnz"`
	Fold  *fold.WriteStats `json:"fold"`
	Meta  *fold.WriteStats `json:"meta,omitempty"` // cells mode: the scdlmeta fold
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
		opts.Mode = scdl.ModeCells
	}
	st := &SCDLExportStats{Mode: opts.Mode, Cells: a.NumRows(), NNZ: a.NNZ()}
	switch opts.Mode {
	case scdl.ModeCells:
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
		meta, err := scdl.NewFileSource(a.Dir(), scdl.OtherFiles(a))
		if err != nil {
			return nil, err
		}
		// Both folds are staged whole before either is renamed into place,
		// so that a failure or a kill leaves neither under its final names.
		metaFold, err := fold.Stage(ctx, meta, fold.WriteOptions{Dir: opts.Dir, Fold: SCDLMetaFold, ShardSize: math.MaxInt64, Workers: 1, Replace: opts.Replace})
		if err != nil {
			return nil, err
		}
		maxMembers := 0
		if opts.CellsPerShard > 0 {
			maxMembers = 3 * opts.CellsPerShard
		}
		cellsFold, err := fold.Stage(ctx, scdl.NewCellSource(a, scdlSourceOptions(scdl.ModeCells)), fold.WriteOptions{Dir: opts.Dir, Fold: opts.Fold,
			ShardSize: opts.ShardSize, MaxMembers: maxMembers, Workers: opts.Workers, Progress: opts.Progress, Replace: opts.Replace})
		if err != nil {
			metaFold.Abort()
			return nil, err
		}
		folds, err := fold.CommitAll(metaFold, cellsFold)
		if err != nil {
			return nil, err
		}
		st.Meta, st.Fold = folds[0], folds[1]
	case scdl.ModeArchive:
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
		src, err := scdl.NewFileSource(a.Dir(), a.Files())
		if err != nil {
			return nil, err
		}
		st.Fold, err = fold.Write(ctx, src, fold.WriteOptions{Dir: opts.Dir, Fold: opts.Fold, ShardSize: opts.ShardSize,
			Workers: 1, Progress: opts.Progress, Replace: opts.Replace})
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("SCDL mode %q: want %s or %s", opts.Mode, scdl.ModeCells, scdl.ModeArchive)
	}
	return st, nil
}

// Cells per batch and per Run shard of the cell sources made here
// (variables for tests).
var (
	scdlBatchCells = scdl.DefaultBatchCells
	scdlChunkCells = scdl.DefaultChunkCells
)

// scdlSourceOptions are the options of an SCDL source in mode.
func scdlSourceOptions(mode string) scdl.SourceOptions {
	return scdl.SourceOptions{Mode: mode, BatchCells: scdlBatchCells, ChunkCells: scdlChunkCells}
}

// NewSCDLSource reads an opened SCDL archive as one source of rows, for
// targets of one namespace (scdl.NewSource). Cells mode gives every file
// but the three arrays under scdl.MetaPrefix, then three rows per cell as
// SCDLToTar names them; archive mode gives every file under its path.
// ToSCDL rebuilds the archive, byte for byte, from either.
func NewSCDLSource(a *scdl.Archive, mode string) (dataset.PayloadSource, error) {
	return scdl.NewSource(a, scdlSourceOptions(mode))
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
