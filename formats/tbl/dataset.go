package tbl

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// tblDataset is a TBL file to read: a sample per row, by its metadata
// name (else %09d.<ext>); a sample's other metadata blocks travel as a
// .tblmeta.json row after it.
type tblDataset struct {
	path string
	r    *Reader
	last *Source // the last copying pass, for its warnings
}

// open opens a TBL file as a dataset (registry.Format.Open).
func open(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	if err := registry.NoOptions("TBL", o.Format); err != nil {
		return nil, err
	}
	path, err := registry.OnePath(registry.Lookup("tbl"), paths)
	if err != nil {
		return nil, err
	}
	r, err := Open(path)
	if err != nil {
		return nil, err
	}
	return &tblDataset{path: path, r: r}, nil
}

func (d *tblDataset) Rows(listing bool) (dataset.PayloadSource, error) {
	s := &Source{Reader: d.r, NoData: listing}
	if !listing {
		d.last = s
	}
	return s, nil
}

func (d *tblDataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	names := &Source{Reader: d.r}
	for i := range d.r.Len() {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, err := names.SampleName(i)
		if err != nil {
			return err
		}
		s, err := d.r.entry(i)
		if err != nil {
			return err
		}
		err = fn(registry.Entry{Name: name, Size: int64(s.Size),
			Fields: []registry.Field{{Key: "sample", Value: i}, {Key: "format", Value: strings.ToLower(s.Format.String())}}})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *tblDataset) ReadEntry(name string) ([]byte, error) {
	names := &Source{Reader: d.r}
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

// create writes the rows of in into a new TBL file at path
// (registry.Format.Create). Its options are a RowsOptions.
func create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := rowsOptions(o.Format)
	if err != nil {
		return nil, err
	}
	opts.Workers, opts.Progress, opts.Overwrite, opts.Memory = o.Workers, o.Progress, o.Overwrite, o.Memory
	st, err := WriteRows(ctx, in.Rows, path, opts)
	if err != nil {
		return nil, err
	}
	return Result(st, registry.InputName(in)), nil
}

// createPart writes a task's part of a partitioned run
// (registry.Format.CreatePart). Its options are a RowsOptions.
func createPart(ctx context.Context, in registry.Input, dir string, o registry.CreateOptions) (any, error) {
	opts, err := rowsOptions(o.Format)
	if err != nil {
		return nil, err
	}
	opts.Workers, opts.Progress = o.Workers, o.Progress
	return WritePart(ctx, in.Rows, dir, opts)
}

// mergeParts writes the TBL file of a partitioned run from its parts
// (registry.Format.MergeParts).
func mergeParts(ctx context.Context, parts []string, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := rowsOptions(o.Format)
	if err != nil {
		return nil, err
	}
	opts.Overwrite = o.Overwrite
	st, ms, err := MergeParts(ctx, parts, path, opts)
	if err != nil {
		return nil, err
	}
	res := MergeResult(st, ms)
	return res, nil
}

// MergeResult reports a TBL file merged from the parts of a partitioned
// run.
func MergeResult(st *RowsStats, ms *MergeStats) *registry.Result {
	res := Result(st, fmt.Sprintf("%d parts", ms.Parts))
	res.Summary += fmt.Sprintf(" (%s copied)", human.Bytes(ms.BytesCopied))
	res.Stats = &registry.MergedStats{Format: "tbl", Stats: st, Merge: ms}
	return res
}

// Result reports a conversion into TBL from what (the source, as a
// person names it).
func Result(st *RowsStats, what string) *registry.Result {
	res := &registry.Result{Output: st.Output, Members: st.Samples, Bytes: st.Bytes, Stats: st}
	if !st.NamesKept {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: member names are not stored (TBL v1 has no place for them; v2 keeps them unless --no-names or --compat): converting back names samples by their index", st.Output))
	}
	var skipped []string
	for k, n := range st.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(skipped)
	extra := ""
	if len(skipped) > 0 {
		extra = " (not converted: " + strings.Join(skipped, ", ") + ")"
	}
	if st.Hardlinks > 0 {
		extra = fmt.Sprintf(" (%d hard links as files)", st.Hardlinks) + extra
	}
	res.Summary = fmt.Sprintf("%s: TBL v%d, %d samples, %s from %s%s", st.Output, st.Version, st.Samples, human.Bytes(st.Bytes), what, extra)
	if st.MetaDropped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: the metadata of %d samples (their .tblmeta.json members) is not kept: this TBL has no metadata section", st.Output, st.MetaDropped))
	}
	return res
}
