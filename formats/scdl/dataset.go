package scdl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// scdlDataset is an SCDL archive to read, in cells mode (a row per file
// beside the matrix under MetaPrefix, then three a cell) or archive mode
// (every file under its path).
type scdlDataset struct {
	a    *Archive
	mode string
}

// open opens an archive as a dataset (registry.Format.Open).
func open(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	if _, err := registry.FormatOptions[OpenOptions]("SCDL", o.Format); err != nil {
		return nil, err
	}
	path, err := registry.OnePath(registry.Lookup("scdl"), paths)
	if err != nil {
		return nil, err
	}
	mode := o.Mode
	if mode == "" {
		mode = ModeCells
	}
	if mode != ModeCells && mode != ModeArchive {
		return nil, fmt.Errorf("SCDL: mode %q is neither cells nor archive", mode)
	}
	a, err := Open(path)
	if err != nil {
		return nil, err
	}
	return &scdlDataset{a: a, mode: mode}, nil
}

func (d *scdlDataset) Rows(bool) (dataset.PayloadSource, error) {
	return NewSource(d.a, SourceOptions{Mode: d.mode})
}

func (d *scdlDataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	src, err := NewSource(d.a, SourceOptions{Mode: d.mode})
	if err != nil {
		return err
	}
	return dataset.Run(ctx, src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		return fn(registry.Entry{Name: string(r.Name), Size: r.Size})
	}), dataset.Options{})
}

func (d *scdlDataset) ReadEntry(name string) ([]byte, error) { return Member(d.a, name) }

func (d *scdlDataset) Size() int64 {
	var n int64
	for _, f := range d.a.Files() {
		if st, err := os.Stat(filepath.Join(d.a.Dir(), filepath.FromSlash(f))); err == nil {
			n += st.Size()
		}
	}
	return n
}

func (d *scdlDataset) Unit() string       { return "files" }
func (d *scdlDataset) Warnings() []string { return nil }
func (d *scdlDataset) Close() error       { return d.a.Close() }

// create rebuilds an archive at path from the rows of in
// (registry.Format.Create): see WriteRows.
func create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	if err := registry.NoOptions("SCDL", o.Format); err != nil {
		return nil, err
	}
	st, err := WriteRows(ctx, in.Rows, path, RowsOptions{Overwrite: o.Overwrite, Workers: o.Workers, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	return Result(st, registry.InputName(in)), nil
}

// createPart writes a task's part of a partitioned run
// (registry.Format.CreatePart).
func createPart(ctx context.Context, in registry.Input, dir string, o registry.CreateOptions) (any, error) {
	if err := registry.NoOptions("SCDL", o.Format); err != nil {
		return nil, err
	}
	return WritePart(ctx, in.Rows, dir, RowsOptions{Workers: o.Workers, Progress: o.Progress})
}

// mergeParts writes the archive of a partitioned run from its parts
// (registry.Format.MergeParts).
func mergeParts(ctx context.Context, parts []string, path string, o registry.CreateOptions) (*registry.Result, error) {
	if err := registry.NoOptions("SCDL", o.Format); err != nil {
		return nil, err
	}
	st, ms, err := MergeParts(ctx, parts, path, RowsOptions{Overwrite: o.Overwrite, Workers: o.Workers})
	if err != nil {
		return nil, err
	}
	res := Result(st, fmt.Sprintf("%d parts", ms.Parts))
	res.Summary += fmt.Sprintf(" (%s copied, %s linked)", human.Bytes(ms.CopiedBytes), human.Bytes(ms.LinkedBytes))
	res.Stats = &registry.MergedStats{Format: "scdl", Stats: st, Merge: ms}
	return res, nil
}
