package barecat

import (
	"context"
	"fmt"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

// barecatDataset is an archive to read: files in path order (Mode
// "path") or in the order they were added (Mode "address", the default:
// each shard read front to back).
type barecatDataset struct {
	a     *Archive
	order Order
}

// open opens an archive as a dataset (registry.Format.Open).
func open(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	if _, err := registry.FormatOptions[OpenOptions]("Barecat", o.Format); err != nil {
		return nil, err
	}
	path, err := registry.OnePath(registry.Lookup("barecat"), paths)
	if err != nil {
		return nil, err
	}
	order := ByAddress
	switch o.Mode {
	case "", "address":
	case "path":
		order = ByPath
	default:
		return nil, fmt.Errorf("Barecat: order %q is neither path nor address", o.Mode)
	}
	a, err := Open(path)
	if err != nil {
		return nil, err
	}
	return &barecatDataset{a: a, order: order}, nil
}

func (d *barecatDataset) Rows(listing bool) (dataset.PayloadSource, error) {
	return &Source{Archive: d.a, Order: d.order, NoData: listing}, nil
}

func (d *barecatDataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	return d.a.Files(ctx, ByPath, func(f File) error {
		return fn(registry.Entry{Name: f.Path, Size: f.Size,
			Fields: []registry.Field{{Key: "shard", Value: f.Shard}, {Key: "offset", Value: f.Offset}}})
	})
}

func (d *barecatDataset) ReadEntry(name string) ([]byte, error) {
	f, err := d.a.Lookup(name)
	if err != nil {
		return nil, err
	}
	return d.a.ReadFile(f)
}

func (d *barecatDataset) Size() int64 {
	var n int64
	for _, s := range d.a.ShardSizes() {
		n += s
	}
	return n
}

func (d *barecatDataset) Unit() string       { return "files" }
func (d *barecatDataset) Warnings() []string { return d.a.Warnings() }
func (d *barecatDataset) Close() error       { return d.a.Close() }

// create writes the rows of in into a new archive at path
// (registry.Format.Create).
func create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	if err := createOptions(o.Format); err != nil {
		return nil, err
	}
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	st, err := WriteRows(ctx, src, path, RowsOptions{ShardSize: o.ShardSize, Workers: o.Workers, Overwrite: o.Overwrite, Progress: o.Progress, Memory: o.Memory})
	if err != nil {
		return nil, err
	}
	return rowsResult(st, path, registry.InputName(in)), nil
}

func rowsResult(st *RowsStats, path, what string) *registry.Result {
	return &registry.Result{Output: path, Members: st.Files, Bytes: st.Bytes, Stats: st, Summary: fmt.Sprintf("%s: %d files, %d directories, %s from %s into %d shards",
		path, st.Files, st.Dirs, human.Bytes(st.Bytes), what, st.Shards)}
}

// createPart writes a task's part of a partitioned run
// (registry.Format.CreatePart).
func createPart(ctx context.Context, in registry.Input, dir string, o registry.CreateOptions) (any, error) {
	if err := createOptions(o.Format); err != nil {
		return nil, err
	}
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	return WritePart(ctx, src, dir, RowsOptions{ShardSize: o.ShardSize, Workers: o.Workers, Progress: o.Progress})
}

// mergeParts writes the archive of a partitioned run from its parts
// (registry.Format.MergeParts).
func mergeParts(ctx context.Context, parts []string, path string, o registry.CreateOptions) (*registry.Result, error) {
	if err := createOptions(o.Format); err != nil {
		return nil, err
	}
	st, ms, err := MergeParts(ctx, parts, path, RowsOptions{ShardSize: o.ShardSize, Workers: o.Workers, Overwrite: o.Overwrite})
	if err != nil {
		return nil, err
	}
	res := rowsResult(st, path, fmt.Sprintf("%d parts", ms.Parts))
	res.Summary += fmt.Sprintf(" (%s copied, %s linked)", human.Bytes(ms.BytesCopied), human.Bytes(ms.BytesLinked))
	res.Stats = &registry.MergedStats{Format: "barecat", Stats: st, Merge: ms}
	return res, nil
}
