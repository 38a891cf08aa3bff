package mds

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
)

func init() {
	registry.Register(&registry.Format{Name: "mds", Label: "MDS", Detect: Detect, Claims: claims, Damaged: damaged,
		Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify, Inputs: inputs, Outputs: outputs,
		Options: options, ParseOptions: parseOptions})
}

// options are MDS's options, as flags: how shards are written.
var options = []registry.Option{
	{Name: "mds-compression", Type: registry.String, Default: "", Dir: registry.Write, Applies: "writing MDS",
		Help: `writing MDS: compress each shard ("zstd", "zstd:LEVEL", "gz[:LEVEL]", "snappy"; "": none)`},
	{Name: "mds-hashes", Type: registry.String, Default: "xxh64", Dir: registry.Write, Applies: "writing MDS",
		Help: `writing MDS: the hashes of each shard the index records, comma-separated and sorted (md5, sha1, sha256, xxh64, ...; "": none)`},
}

// parseOptions makes MDS's Options of the flags' values (writing only).
func parseOptions(dir registry.Direction, v registry.Values) (any, error) {
	if dir != registry.Write {
		return nil, nil
	}
	o := Options{Compression: v.String("mds-compression"), Hashes: []string{}}
	if h := v.String("mds-hashes"); h != "" {
		o.Hashes = strings.Split(h, ",")
	}
	if _, err := newWriter(o, 0); err != nil {
		return nil, err
	}
	return o, nil
}

func open(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	if err := registry.NoOptions("MDS", o.Format); err != nil {
		return nil, err
	}
	p, err := registry.OnePath(registry.Lookup("mds"), paths)
	if err != nil {
		return nil, err
	}
	return Open(p)
}

func create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	st, err := Write(ctx, in, path, o)
	if err != nil {
		return nil, err
	}
	return Result(st, registry.InputName(in)), nil
}

// inputs: the index, then the shard files it names.
func inputs(path string) []string {
	files := []string{indexPath(path)}
	d, err := Open(path)
	if err != nil {
		return files
	}
	for _, s := range d.index.Shards {
		f := s.RawData
		if s.ZipData != nil {
			f = s.ZipData
		}
		files = append(files, d.file(f.Basename))
	}
	return files
}

// outputs: the dataset's directory and what is in it.
func outputs(path string, _ registry.Conversion) registry.Outputs {
	var o registry.Outputs
	if _, err := os.Lstat(path); err == nil {
		o.Replaced = append(o.Replaced, path)
		entries, _ := os.ReadDir(path)
		for _, e := range entries {
			o.Replaced = append(o.Replaced, filepath.Join(path, e.Name()))
		}
	}
	return o
}

// Report is what Inspect and Verify say of a dataset.
type Report struct {
	Path        string   `json:"path"`
	Shards      int      `json:"shards"`
	Samples     int64    `json:"samples"`
	Members     int64    `json:"members,omitempty"` // Verify's
	Columns     []string `json:"columns"`           // name:encoding, as first seen
	Compression []string `json:"compression,omitempty"`
	Hashes      []string `json:"hashes,omitempty"`
	RawBytes    int64    `json:"raw_bytes"`
	ZipBytes    int64    `json:"zip_bytes,omitempty"`
	Verified    bool     `json:"verified,omitempty"`
	Unchecked   []string `json:"unchecked,omitempty"` // hashes recorded, not computed
}

func (r *Report) WriteText(w io.Writer) error {
	_, err := fmt.Fprintf(w, "MDS %s: %s, %d samples, %d raw bytes", r.Path, human.Count(r.Shards, "shard"), r.Samples, r.RawBytes)
	if err == nil && r.ZipBytes > 0 {
		_, err = fmt.Fprintf(w, " (%d compressed: %s)", r.ZipBytes, strings.Join(r.Compression, ", "))
	}
	if err == nil {
		_, err = fmt.Fprintf(w, "\ncolumns: %s\nhashes: %s\n", strings.Join(r.Columns, " "), strings.Join(r.Hashes, " "))
	}
	if err == nil && r.Verified {
		_, err = fmt.Fprintf(w, "verified: %d members read, every hash recorded matches", r.Members)
		if err == nil && len(r.Unchecked) > 0 {
			_, err = fmt.Fprintf(w, " (not checked: %s)", strings.Join(r.Unchecked, ", "))
		}
		if err == nil {
			_, err = fmt.Fprintln(w)
		}
	}
	return err
}

func report(d *Dataset, path string) *Report {
	r := &Report{Path: path, Shards: len(d.index.Shards), Samples: d.Samples()}
	seen := map[string]bool{}
	add := func(list *[]string, s string) {
		if !seen[s] {
			seen[s] = true
			*list = append(*list, s)
		}
	}
	for _, s := range d.index.Shards {
		for c, name := range s.ColumnNames {
			add(&r.Columns, name+":"+s.ColumnEncodings[c])
		}
		if s.Compression != nil && *s.Compression != "" {
			add(&r.Compression, "compression "+*s.Compression)
		}
		for _, h := range s.Hashes {
			add(&r.Hashes, h)
		}
		r.RawBytes += s.RawData.Bytes
		if s.ZipData != nil {
			r.ZipBytes += s.ZipData.Bytes
		}
	}
	for i, c := range r.Compression {
		r.Compression[i] = strings.TrimPrefix(c, "compression ")
	}
	for _, w := range d.Warnings() {
		r.Unchecked = append(r.Unchecked, w)
	}
	return r
}

// Inspect describes the dataset from its index, and checks that each
// shard file is there, of the size the index records.
func Inspect(ctx context.Context, path string) (registry.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := Open(path)
	if err != nil {
		return nil, err
	}
	for _, s := range d.index.Shards {
		f := s.RawData
		if s.ZipData != nil {
			f = s.ZipData
		}
		p := d.file(f.Basename)
		st, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if st.Size() != f.Bytes {
			return nil, fmt.Errorf("%s: %d bytes, the index records %d: %w", p, st.Size(), f.Bytes, ErrCorrupt)
		}
	}
	return report(d, path), nil
}

// Verify reads every shard whole: its header against the index, every
// sample's values, and each file's hashes the index records.
func Verify(ctx context.Context, path string) (registry.Report, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, err := Open(path)
	if err != nil {
		return nil, err
	}
	r := report(d, path)
	for i := range d.index.Shards {
		err := d.scanShard(ctx, i, false, func(b *batch) error {
			r.Members += int64(b.samples(len(d.cols[i])) * (len(d.cols[i]) - min(1, d.key[i]+1)))
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			return r, fmt.Errorf("%w: %w", err, registry.ErrVerify)
		}
	}
	r.Verified = true
	return r, nil
}
