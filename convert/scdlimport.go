package convert

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/shardset"
	"github.com/itarconv/itarconv/spool"
)

// SCDLImportOptions tune ToSCDL and TarToSCDL.
type SCDLImportOptions struct {
	// Fold is the fold TarToSCDL reads: "" finds fold "scdl" (archive
	// mode) or "cells" (with "scdlmeta" when present).
	Fold string
	// Overwrite replaces an existing directory at the output, once the new
	// archive is complete; without it an existing one is refused.
	Overwrite bool
	Workers   int
	// Spool reads compressed tar shards through decompressed copies.
	Spool    *spool.Spool
	Progress func(dataset.Progress)
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
// under scdl.MetaPrefix, as a conversion through Barecat or TBL leaves
// them. See ToSCDL.
func TarToSCDL(ctx context.Context, dir, out string, opts SCDLImportOptions) (*SCDLImportStats, error) {
	folds, err := shardset.Discover(dir)
	if err != nil {
		return nil, err
	}
	byName := map[string]shardset.Fold{}
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
		if withMeta, err = foldHoldsCells(ctx, opts.Spool, f.Shards); err != nil {
			return nil, err
		}
	}
	st, err := ToSCDL(ctx, func(counting bool) (dataset.PayloadSource, error) {
		var parts []dataset.Part
		if withMeta {
			parts = append(parts, dataset.Part{Source: tarSource(meta.Shards, opts.Spool, !counting), Prefix: scdl.MetaPrefix})
		}
		return dataset.NewConcat(append(parts, dataset.Part{Source: tarSource(f.Shards, opts.Spool, !counting)})...), nil
	}, out, opts)
	if err != nil {
		return nil, err
	}
	st.Fold = pick
	return st, nil
}

// tarSource reads tar shards, with their payloads in the rows if withData.
func tarSource(shards []string, sp *spool.Spool, withData bool) *fold.TarShards {
	t := fold.NewTarShards(shards, tarfile.Options{})
	t.Spool = sp
	if withData {
		t.ReadPayloads, t.BatchBytes = true, 4<<20
	}
	return t
}

// foldHoldsCells tells the two layouts apart by the first regular member:
// a cell's member, or a file of the archive.
func foldHoldsCells(ctx context.Context, sp *spool.Spool, shards []string) (bool, error) {
	for _, sh := range shards {
		plain, err := sp.Plain(ctx, sh)
		if err != nil {
			return false, err
		}
		f, err := tarfile.Open(plain, tarfile.Options{})
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
				return scdl.IsCellMember(m.Name), nil
			}
		}
		f.Close()
	}
	return true, nil // no members: refused as a fold of no cells
}

// ToSCDL builds an SCDL archive at out (a directory that must not exist,
// unless opts.Overwrite) from any source of rows in one of the layouts
// NewSCDLSource and SCDLToTar write: see scdl.WriteRows.
func ToSCDL(ctx context.Context, newSource func(counting bool) (dataset.PayloadSource, error), out string, opts SCDLImportOptions) (*SCDLImportStats, error) {
	st, err := scdl.WriteRows(ctx, newSource, out, scdl.RowsOptions{Overwrite: opts.Overwrite, Workers: opts.Workers, Progress: opts.Progress})
	if err != nil {
		return nil, err
	}
	return &SCDLImportStats{Output: st.Output, Mode: st.Mode, Cells: st.Cells, NNZ: st.NNZ, Files: st.Files, Fresh: st.Fresh}, nil
}
