package scdl

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "scdl", Label: "SCDL", Detect: Detect, Claims: claims, Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify,
		Damaged: damaged, Inputs: inputs, Outputs: outputs, Options: options, ParseOptions: parseOptions, CheckOptions: checkOptions})
}

// OpenOptions are SCDL's own options for reading an archive
// (registry.OpenOptions.Format). The layout it is read in is
// registry.OpenOptions.Mode ("cells" or "archive").
type OpenOptions struct {
	// CellsPerShard, from SCDL in cells mode to tar shards, starts a new
	// shard after that many cells (package convert's SCDLToTar); 0: by
	// size only. Other conversions do not look at it.
	CellsPerShard int
}

// parseOptions makes SCDL's own options of the flags' values: options
// for reading; writing takes none.
func parseOptions(dir registry.Direction, v registry.Values) (any, error) {
	if dir == registry.Read {
		return OpenOptions{CellsPerShard: v.Int("cells-per-shard")}, nil
	}
	return nil, nil
}

// options are SCDL's options, as flags: how an archive is read.
var options = []registry.Option{
	{Name: "scdl-mode", Type: registry.String, Default: ModeCells, Help: `reading SCDL: "cells" (a sample per cell) or "archive" (every file as a member)`,
		Dir: registry.Read, Mode: true, Applies: "reading SCDL"},
	{Name: "cells-per-shard", Type: registry.Int, Default: "0", Help: "SCDL to tar, cells mode: start a new shard after this many cells",
		Dir: registry.Read, With: "tar", Applies: "SCDL to tar shards"},
}

// metaFold is the fold of the archive's other files in a conversion to
// tar shards (package convert's SCDLMetaFold).
const metaFold = "scdlmeta"

// checkOptions refuses the values that do not go together.
func checkOptions(c registry.Conversion) error {
	v := c.Values
	if c.From == "scdl" {
		mode := v.String("scdl-mode")
		if mode != ModeCells && mode != ModeArchive {
			return fmt.Errorf("--scdl-mode: %q is neither cells nor archive", mode)
		}
		if c.To == "tar" {
			switch n := v.Int("cells-per-shard"); {
			case n < 0:
				return errors.New("--cells-per-shard must be positive")
			case n > 0 && mode == ModeArchive:
				return errors.New("--cells-per-shard applies to --scdl-mode cells")
			case v.String("fold") == metaFold:
				return fmt.Errorf("--fold %q: %s is taken", metaFold, metaFold)
			}
		}
	}
	if c.To != "scdl" {
		return nil
	}
	if v.String("shard-size") != "" {
		return errors.New("--shard-size applies to writing shards")
	}
	if len(c.Srcs) != 1 {
		return fmt.Errorf("--to scdl reads one directory of folds (cells + scdlmeta, or scdl), one Barecat archive or one TBL file, not %d paths", len(c.Srcs))
	}
	if c.From == "tar" {
		if st, err := os.Stat(c.Srcs[0]); err != nil {
			return err
		} else if !st.IsDir() {
			return fmt.Errorf("%s is not a directory: --to scdl reads the folds of a directory", c.Srcs[0])
		}
	}
	return nil
}

// damaged: a directory of SCDL arrays without a header.
func damaged(path string) error {
	return fmt.Errorf("%s: %s missing: %w", path, HeaderFile, fs.ErrInvalid)
}

// inputs: every file of the archive.
func inputs(path string) []string {
	var files []string
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	return files
}

// outputs: the archive directory and every file in it.
func outputs(path string, _ registry.Conversion) registry.Outputs {
	var o registry.Outputs
	if _, err := os.Lstat(path); err == nil {
		o.Replaced = append(o.Replaced, path)
	}
	for _, f := range inputs(path) {
		o.Replaced = append(o.Replaced, f)
	}
	return o
}

// Detect tells whether path is an SCDL archive directory: it holds a
// header.sch file.
func Detect(path string) bool {
	st, err := os.Stat(filepath.Join(path, HeaderFile))
	return err == nil && st.Mode().IsRegular()
}

// claims: a directory holding an SCDL array file.
func claims(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return false
	}
	for _, f := range []string{DataFile, RowPtrFile, ColPtrFile} {
		if _, err := os.Stat(filepath.Join(path, f)); err == nil {
			return true
		}
	}
	return false
}
