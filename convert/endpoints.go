package convert

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TBL and SCDL as datasets of rows. Their row sources and sinks live in
// this package, beside the tar fast paths they share code with (TarToTBL's
// in-place mapping and TurboLoader selection, TarToSCDL), so this package
// fills in their registry's Open and Create; each format's own package
// registers its recognition, Inspect and Verify. (Barecat registers all of
// its own, from formats/barecat.)
func init() {
	for name, ends := range map[string]struct {
		open   func([]string, registry.OpenOptions) (registry.Dataset, error)
		create func(context.Context, registry.Input, string, registry.CreateOptions) (*registry.Result, error)
	}{
		"tbl":  {openTBL, createTBL},
		"scdl": {openSCDL, createSCDL},
	} {
		f := registry.Lookup(name)
		f.Open, f.Create = ends.open, ends.create
	}
}

// inputName is what a summary calls the input: its paths, when it is a
// dataset Convert opened.
func inputName(in registry.Input) string {
	if n, ok := in.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "rows"
}

// named is an opened dataset with the paths it was opened from.
type named struct {
	registry.Dataset
	name string
}

func (n named) Name() string { return n.name }

// tblDataset is a TBL file to read: a sample per row, by its metadata
// name (else %09d.<ext>); a sample's other metadata blocks travel as a
// .tblmeta.json row after it.
type tblDataset struct {
	path string
	r    *tbl.Reader
	last *TBLSource // the last copying pass, for its warnings
}

func openTBL(paths []string, _ registry.OpenOptions) (registry.Dataset, error) {
	path, err := registry.OnePath(registry.Lookup("tbl"), paths)
	if err != nil {
		return nil, err
	}
	r, err := tbl.Open(path)
	if err != nil {
		return nil, err
	}
	return &tblDataset{path: path, r: r}, nil
}

func (d *tblDataset) Rows(listing bool) (PayloadSource, error) {
	s := &TBLSource{Reader: d.r, NoData: listing}
	if !listing {
		d.last = s
	}
	return s, nil
}

func (d *tblDataset) List(_ context.Context, fn func(registry.Entry) error) error {
	names := &TBLSource{Reader: d.r}
	for i := range d.r.Len() {
		name, err := names.SampleName(i)
		if err != nil {
			return err
		}
		s := d.r.Sample(i)
		err = fn(registry.Entry{Name: name, Size: int64(s.Size),
			Fields: []registry.Field{{Key: "sample", Value: i}, {Key: "format", Value: strings.ToLower(s.Format.String())}}})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *tblDataset) ReadEntry(name string) ([]byte, error) {
	names := &TBLSource{Reader: d.r}
	for i := range d.r.Len() {
		n, err := names.SampleName(i)
		if err != nil {
			return nil, err
		}
		if n == name {
			return d.r.ReadSample(i, nil)
		}
	}
	return nil, fmt.Errorf("%s: %s: no sample of that name: %w", d.path, name, fs.ErrNotExist)
}

func (d *tblDataset) Size() int64 {
	if st, err := os.Stat(d.path); err == nil {
		return st.Size()
	}
	return 0
}

func (d *tblDataset) Unit() string { return "samples" }

// Warnings: metadata that could not serve as names, found while copying;
// a file without names, which a conversion back cannot reproduce.
func (d *tblDataset) Warnings() []string {
	var w []string
	if d.last != nil {
		if n, first := d.last.BadJSON(); n > 0 {
			w = append(w, fmt.Sprintf("%s: %d samples have a JSON-typed metadata block that does not parse (first: sample %v): kept as they are, not used as names", d.path, n, first))
		}
	}
	if d.r.Version() == 2 && !d.r.HasMetadata() {
		w = append(w, fmt.Sprintf("%s has no metadata section: convert back with --no-names for an identical file", d.path))
	}
	return w
}

func (d *tblDataset) Close() error { return d.r.Close() }

func createTBL(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, _ := o.Format.(TBLOptions)
	opts.Workers, opts.Progress = o.Workers, o.Progress
	st, err := ToTBL(ctx, in.Rows, path, opts)
	if err != nil {
		return nil, err
	}
	return TBLResult(st, inputName(in)), nil
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
	st, err := ToSCDL(ctx, in.Rows, path, SCDLImportOptions{Workers: o.Workers, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	return SCDLResult(st, inputName(in)), nil
}
