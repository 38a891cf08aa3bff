package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
)

// The TBL and SCDL sinks (ToTBL, ToSCDL) live in this package, beside
// the tar fast paths they share code with (TarToTBL's in-place mapping and
// TurboLoader's selection; TarToSCDL), so this package fills in those
// formats' Create; so too SCDL's Open, whose row sources are here. Every
// other part of a format registers from the format's own package.
func init() {
	registry.Lookup("tbl").Create = createTBL
	scdlFormat := registry.Lookup("scdl")
	scdlFormat.Open, scdlFormat.Create = openSCDL, createSCDL
}

// named is an opened dataset with the paths it was opened from.
type named struct {
	registry.Dataset
	name string
}

func (n named) Name() string { return n.name }

func createTBL(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, _ := o.Format.(TBLOptions)
	opts.Workers, opts.Progress = o.Workers, o.Progress
	st, err := ToTBL(ctx, in.Rows, path, opts)
	if err != nil {
		return nil, err
	}
	return TBLResult(st, registry.InputName(in)), nil
}

// scdlDataset is an SCDL archive to read, in cells mode (a row per file
// beside the matrix under scdlmeta/, then three a cell) or archive mode
// (every file under its path).
type scdlDataset struct {
	a    *scdl.Archive
	mode string
}

func openSCDL(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	path, err := registry.OnePath(registry.Lookup("scdl"), paths)
	if err != nil {
		return nil, err
	}
	mode := o.Mode
	if mode == "" {
		mode = SCDLModeCells
	}
	if mode != SCDLModeCells && mode != SCDLModeArchive {
		return nil, fmt.Errorf("SCDL: mode %q is neither cells nor archive", mode)
	}
	a, err := scdl.Open(path)
	if err != nil {
		return nil, err
	}
	return &scdlDataset{a: a, mode: mode}, nil
}

func (d *scdlDataset) Rows(bool) (PayloadSource, error) { return NewSCDLSource(d.a, d.mode) }

func (d *scdlDataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	src, err := NewSCDLSource(d.a, d.mode)
	if err != nil {
		return err
	}
	return Run(ctx, src, dataset.RowFunc(func(_ int, r *Row) error {
		return fn(registry.Entry{Name: string(r.Name), Size: r.Size})
	}), Options{})
}

func (d *scdlDataset) ReadEntry(name string) ([]byte, error) { return SCDLMember(d.a, name) }

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

func createSCDL(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	return replacingDir(path, o.Overwrite, func(out string) (*registry.Result, error) {
		st, err := ToSCDL(ctx, in.Rows, out, SCDLImportOptions{Workers: o.Workers, Progress: o.Progress})
		if err != nil {
			return nil, err
		}
		st.Output = path
		return SCDLResult(st, registry.InputName(in)), nil
	})
}
