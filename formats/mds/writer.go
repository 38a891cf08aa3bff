package mds

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"unicode/utf8"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/safefile"
)

// Options are MDS's own options for writing
// (registry.CreateOptions.Format).
type Options struct {
	// Compression compresses each shard as MosaicML names it: "zstd",
	// "zstd:19", "gz", "gz:6", "snappy"; "" writes plain shards.
	Compression string
	// Hashes are the hashes of each shard file the index records, sorted
	// ("sha1", "xxh64", ...). nil records xxh64's, which costs little and
	// lets Verify check every byte; an empty, non-nil slice records none.
	Hashes []string
}

// DefaultShardSize is the size past which a shard is closed, as
// MosaicML's writer's size_limit defaults (64 MiB).
const DefaultShardSize = 1 << 26

// WriteStats are what Write wrote.
type WriteStats struct {
	Output  string `json:"output"`
	Shards  int    `json:"shards"`
	Samples int64  `json:"samples"`
	Members int64  `json:"members"`
	Bytes   int64  `json:"bytes"`
	// Skipped counts the rows that are not files (directories, links),
	// which MDS has no place for.
	Skipped int64 `json:"skipped"`
}

// Write writes the rows of in as an MDS dataset in the directory out,
// which must not exist unless overwrite is set (it is then replaced, if
// it is an MDS dataset, once the new one is complete). shardSize bounds
// each shard's bytes (0: DefaultShardSize).
func Write(ctx context.Context, in registry.Input, out string, o registry.CreateOptions) (*WriteStats, error) {
	opts, err := registry.FormatOptions[Options]("MDS", o.Format)
	if err != nil {
		return nil, err
	}
	w, err := newWriter(opts, o.ShardSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	tmp, err := stage(out, o.Overwrite)
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // nothing, once committed
	w.dir = tmp
	st, err := w.run(ctx, in, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	st.Output = out
	if err := commit(tmp, out, o.Overwrite); err != nil {
		return nil, err
	}
	return st, nil
}

// stage makes the temporary directory a dataset at out is written in,
// beside it, after checking that out may be written: it does not exist,
// or overwrite is set and it is an MDS dataset.
func stage(out string, overwrite bool) (string, error) {
	if _, err := os.Lstat(out); err == nil {
		if !overwrite {
			return "", fmt.Errorf("%s: %w", out, fs.ErrExist)
		}
		if !Detect(out) && !claims(out) {
			return "", fmt.Errorf("%s exists and is not an MDS dataset: not replaced: %w", out, fs.ErrExist)
		}
	}
	parent, base := filepath.Split(filepath.Clean(out))
	parent = cmp.Or(parent, ".")
	safefile.SweepLeftovers(parent)
	return os.MkdirTemp(parent, safefile.TempName(base))
}

// commit puts the complete dataset tmp in place as out.
func commit(tmp, out string, overwrite bool) error {
	if overwrite {
		return safefile.ReplaceDir(tmp, out)
	}
	return safefile.CommitDir(tmp, out)
}

// prepared is what Prepare made of a batch: what each row's payload
// allows its column (known: where Prepare could see it), and where its
// key ends in its name (-1: not a file).
type prepared struct {
	allow  []choice
	num    []int64 // the value as an integer, where it is one
	known  []bool
	keyEnd []int
}

// Prepare checks each row's name and classifies its payload, on the
// workers: the ordered writer then only copies the bytes.
func (w *writer) Prepare(b *dataset.Batch) error {
	p := &prepared{allow: make([]choice, len(b.Rows)), num: make([]int64, len(b.Rows)), known: make([]bool, len(b.Rows)), keyEnd: make([]int, len(b.Rows))}
	for i := range b.Rows {
		r := &b.Rows[i]
		p.keyEnd[i] = -1
		if r.Kind != dataset.KindFile {
			continue
		}
		key, _, err := checkName(r)
		if err != nil {
			return err
		}
		p.keyEnd[i] = len(key)
	}
	b.Prep = p
	v := &mapView{b: b, files: w.files}
	defer v.close()
	return mapped.Guard(func() error {
		for i := range b.Rows {
			if p.keyEnd[i] < 0 {
				continue
			}
			data, err := v.bytes(i)
			if err != nil || data == nil {
				return err
			}
			p.allow[i], p.known[i] = allowed(string(b.Rows[i].Name[p.keyEnd[i]+1:]), data), true
			p.num[i], _ = parseInt(data, p.allow[i])
		}
		return nil
	})
}

// mapView shows Prepare a batch's payloads without reading them: a row's
// Inline bytes, or a window of its shard's file, mapped, that holds it
// and the rows after it (viewWindow bytes at most, so that what is mapped
// stays small).
type mapView struct {
	b      *dataset.Batch
	files  dataset.ShardFiles
	f      *os.File
	r      *mapped.Region
	lo, hi int64
}

// bytes returns row i's payload, or nil where it cannot be seen so (no
// shard file, or one that cannot be mapped).
func (v *mapView) bytes(i int) ([]byte, error) {
	r := &v.b.Rows[i]
	switch {
	case r.Inline != nil:
		return r.Inline, nil
	case r.Size == 0:
		return []byte{}, nil
	case v.files == nil || r.DataOffset < 0:
		return nil, nil
	}
	if v.r == nil || r.DataOffset < v.lo || r.DataOffset+r.Size > v.hi {
		if v.f == nil {
			var err error
			if v.f, err = v.files.ShardFile(v.b.Shard); err != nil {
				return nil, err
			}
		}
		v.r.Close()
		v.r = nil
		lo, hi := r.DataOffset, r.DataOffset+r.Size
		for j := i + 1; j < len(v.b.Rows); j++ {
			q := &v.b.Rows[j]
			if q.Inline != nil || q.Size == 0 {
				continue
			}
			if q.DataOffset < hi || q.DataOffset+q.Size-lo > viewWindow {
				break
			}
			hi = q.DataOffset + q.Size
		}
		reg, err := mapped.Map(v.f, lo, hi-lo)
		if err != nil {
			return nil, nil
		}
		v.r, v.lo, v.hi = reg, lo, hi
	}
	return v.r.Bytes(r.DataOffset, r.Size), nil
}

func (v *mapView) close() {
	v.r.Close()
	if v.f != nil {
		v.f.Close()
	}
}

// split cuts a member's name into its key and extension as WebDataset
// does: the extension is all past the first dot of the last element.
func split(name []byte) (key, ext []byte, ok bool) {
	slash := bytes.LastIndexByte(name, '/') + 1
	dot := bytes.IndexByte(name[slash:], '.')
	if dot < 0 {
		return nil, nil, false
	}
	return name[:slash+dot], name[slash+dot+1:], true
}

// checkName splits a file's name, refusing what MDS cannot keep.
func checkName(r *dataset.Row) (key, ext []byte, err error) {
	key, ext, ok := split(r.Name)
	switch {
	case !ok:
		return nil, nil, fmt.Errorf("%q: no extension, which MDS needs to name its column: %w", r.Name, ErrUnkeepable)
	case !utf8.Valid(ext):
		return nil, nil, fmt.Errorf("%q: an extension that is not UTF-8 (a column's name is text): %w", r.Name, ErrUnkeepable)
	case string(ext) == KeyColumn:
		return nil, nil, fmt.Errorf("%q: the extension %s is the key's column: %w", r.Name, KeyColumn, ErrUnkeepable)
	case r.Size > maxUint32-4096:
		return nil, nil, fmt.Errorf("%q: %d bytes, past MDS's 4 GiB: %w", r.Name, r.Size, ErrUnkeepable)
	}
	return key, ext, nil
}

// syncFiles syncs the named files of dir.
func syncFiles(dir string, names []string) error {
	for _, name := range names {
		f, err := os.OpenFile(filepath.Join(dir, name), os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// writeIndex writes index.json, the shards written.
func (w *writer) writeIndex() error { return writeIndex(w.dir, w.shards) }

// writeIndex writes dir's index.json, of these shards.
func writeIndex(dir string, shards []ShardInfo) error {
	b := appendIndexHead(nil)
	for i := range shards {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = shards[i].appendShard(b)
	}
	b = appendIndexTail(b)
	return os.WriteFile(filepath.Join(dir, IndexFile), b, 0o644)
}

// Result reports a dataset written from what (the source, as a person
// names it).
func Result(st *WriteStats, what string) *registry.Result {
	res := &registry.Result{Output: st.Output, Members: st.Members, Bytes: st.Bytes, Stats: st,
		Summary: fmt.Sprintf("%s: %d samples (%d members, %s) in %s from %s", st.Output, st.Samples, st.Members, human.Bytes(st.Bytes), human.Count(st.Shards, "shard"), what)}
	if st.Skipped > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%s: %d rows that are not files (directories, links) left out: MDS holds files only", st.Output, st.Skipped))
	}
	return res
}
