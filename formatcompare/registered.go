package formatcompare

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// registryFormats are the formats benchmarked through the registry alone,
// by name, when a linked package registered them with Create and Open:
// built by Create from the fold (opened as the "tar" format), read by
// their Dataset (ReadEntry by name at random, the rows in order for a
// scan). Any other such format joins by its name in --formats.
var registryFormats = []string{"parquet", "mds"}

// RegisteredFormats are the formats benchmarked through the registry that
// are registered (linked into the program): "parquet", "mds". A run takes
// them by name (Options.Formats), beside AllFormats.
func RegisteredFormats() []string {
	var out []string
	for _, n := range registryFormats {
		if byRegistry(n) != nil {
			out = append(out, n)
		}
	}
	return out
}

// byRegistry is the registered format of that name that can be built and
// read through the registry, or nil (and for the formats with readers of
// their own here, and the tar fold, the source itself).
func byRegistry(name string) *registry.Format {
	if name == "tar" || slices.Contains(builtinFormats, name) {
		return nil
	}
	r := registry.Lookup(name)
	if r == nil || r.Create == nil || r.Open == nil {
		return nil
	}
	return r
}

// registered sets f up as a format built and read through the registry.
func (f *format) registered(reg *registry.Format) {
	out := func() string { return filepath.Join(f.dir, "data."+reg.Name) }
	f.build = func(ctx context.Context, workers int) error {
		in, err := registry.Lookup("tar").Open(f.src.shards, registry.OpenOptions{})
		if err != nil {
			return err
		}
		defer in.Close()
		_, err = reg.Create(ctx, in, out(), registry.CreateOptions{Workers: workers})
		return err
	}
	f.files = func() ([]fileInfo, error) {
		var paths []string
		err := filepath.WalkDir(out(), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				paths = append(paths, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		// Which bytes are an index is the format's own knowledge: every
		// file counts as data.
		return statFiles(paths, "data", false)
	}
	f.locate = func(int) (string, int64, error) {
		return "", 0, fmt.Errorf("%s: a format read through the registry does not say where a sample lies", reg.Label)
	}
	f.open = func() (opened, error) {
		ds, err := reg.Open([]string{out()}, registry.OpenOptions{})
		if err != nil {
			return nil, err
		}
		r := &registryReader{ds: ds, src: f.src, byName: make(map[string]int, len(f.src.samples))}
		for i, s := range f.src.samples {
			r.byName[s.name] = i
		}
		if f.holds == nil {
			holds := make([]bool, len(f.src.samples))
			err := ds.List(context.Background(), func(e registry.Entry) error {
				if i, ok := r.byName[e.Name]; ok {
					holds[i] = true
				}
				return nil
			})
			if err != nil {
				ds.Close()
				return nil, err
			}
			f.holds = holds
		}
		files, err := f.files()
		if err == nil && len(files) > 0 {
			r.first = files[0].Path
		}
		return r, nil
	}
}

// registryReader reads a sample by its name (Dataset.ReadEntry), and
// scans the rows in the dataset's order.
type registryReader struct {
	ds     registry.Dataset
	src    *source
	byName map[string]int
	first  string // a file of the output, for where
}

func (r *registryReader) read(i int, buf []byte) ([]byte, error) {
	b, err := r.ds.ReadEntry(r.src.samples[i].name)
	if err != nil {
		return nil, err
	}
	buf = grow(buf, int64(len(b)))
	copy(buf, b)
	return buf, nil
}

// verify: the format's reader checks what it records as it reads.
func (r *registryReader) verify(int, []byte) (string, error) { return "", nil }

func (r *registryReader) scan(ctx context.Context, buf []byte, fn func(int, []byte) error) error {
	src, err := r.ds.Rows(false)
	if err != nil {
		return err
	}
	defer registry.CloseSource(src)
	return dataset.Run(ctx, src, dataset.RowFunc(func(_ int, row *dataset.Row) error {
		i, ok := r.byName[string(row.Name)]
		if !ok || row.Kind != dataset.KindFile {
			return nil
		}
		data := row.Inline
		if data == nil {
			var err error
			if data, err = dataset.ReadPayload(src, row); err != nil {
				return err
			}
		}
		return fn(i, data)
	}), dataset.Options{})
}

// where names a file of the output, but not the bytes a read touches: the
// cold check cannot tell whether they were resident, and times the read.
func (r *registryReader) where(int) (string, int64, int64, error) {
	if r.first == "" {
		return "", 0, 0, os.ErrNotExist
	}
	return r.first, 0, 0, nil
}

func (r *registryReader) close() error { return r.ds.Close() }
