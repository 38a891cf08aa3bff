package mds

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// KeyColumn is the column holding a sample's key, as WebDataset names it.
const KeyColumn = "__key__"

// Dataset is an MDS dataset open for reading: its index, read and
// checked; the shards are read as rows are asked for.
type Dataset struct {
	dir   string
	index *Index
	cols  [][]column // each shard's columns
	key   []int      // each shard's key column, or -1
	base  []int64    // the samples before each shard
	ent   entries    // ReadEntry's
}

// Open opens the MDS dataset of a directory (or of its index.json).
func Open(path string) (*Dataset, error) {
	dir := path
	if filepath.Base(path) == IndexFile {
		if st, err := os.Stat(path); err == nil && !st.IsDir() {
			dir = filepath.Dir(path)
		}
	}
	ix, err := readIndex(dir)
	if err != nil {
		return nil, err
	}
	d := &Dataset{dir: dir, index: ix}
	var n int64
	for _, s := range ix.Shards {
		cols := make([]column, len(s.ColumnNames))
		key := -1
		for c, name := range s.ColumnNames {
			enc, _ := lookupEncoding(s.ColumnEncodings[c])
			cols[c] = column{name: name, encName: s.ColumnEncodings[c], enc: enc}
			if name == KeyColumn && enc.kind == kindRaw {
				key = c
			}
		}
		d.cols = append(d.cols, cols)
		d.key = append(d.key, key)
		d.base = append(d.base, n)
		n += s.Samples
	}
	return d, nil
}

// Index returns the dataset's index.
func (d *Dataset) Index() *Index { return d.index }

// file is the path of a file the index names.
func (d *Dataset) file(basename string) string {
	return filepath.Join(d.dir, filepath.FromSlash(basename))
}

// Samples is the number of samples of the dataset.
func (d *Dataset) Samples() int64 {
	n := int64(0)
	for _, s := range d.index.Shards {
		n += s.Samples
	}
	return n
}

// member is one value of a sample, as a member: name key.column.
type member struct {
	name   []byte
	data   []byte
	shard  int
	sample int64 // in the dataset
	col    int
	offset int64 // the value's offset in the shard's raw bytes
}

// members turns a batch of shard i into members, handing each to fn.
// Names and the text of numbers are built in buffers of their own, one
// for the batch.
func (d *Dataset) members(i int, b *batch, fn func(m *member) error) error {
	cols := d.cols[i]
	n := b.samples(len(cols))
	var names, text []byte
	type at struct{ name, text [2]int }
	ats := make([]at, 0, n*len(cols))
	for x := 0; x < n; x++ {
		vals := b.vals[x*len(cols) : (x+1)*len(cols)]
		start := len(names)
		if k := d.key[i]; k >= 0 {
			names = append(names, b.data[vals[k][0]:vals[k][1]]...)
		} else {
			names = fmt.Appendf(names, "%08d", d.base[i]+int64(b.first+x))
		}
		key := [2]int{start, len(names)}
		for c, col := range cols {
			if c == d.key[i] {
				continue
			}
			var a at
			if len(names) == key[1] {
				a.name[0] = key[0] // the first member's name takes the key as written
			} else {
				a.name[0] = len(names)
				names = append(names, names[key[0]:key[1]]...)
			}
			names = append(append(names, '.'), col.name...)
			a.name[1] = len(names)
			a.text = [2]int{-1, -1}
			if k := col.enc.kind; k == kindInt || k == kindUint || k == kindFloat {
				a.text[0] = len(text)
				text = col.enc.appendText(text, b.data[vals[c][0]:vals[c][1]])
				a.text[1] = len(text)
			}
			ats = append(ats, a)
		}
	}
	if text == nil {
		text = []byte{}
	}
	j := 0
	for x := 0; x < n; x++ {
		vals := b.vals[x*len(cols) : (x+1)*len(cols)]
		for c := range cols {
			if c == d.key[i] {
				continue
			}
			a := ats[j]
			j++
			m := member{name: names[a.name[0]:a.name[1]:a.name[1]], shard: i, sample: d.base[i] + int64(b.first+x), col: c,
				offset: b.base + int64(vals[c][0])}
			if a.text[0] >= 0 {
				m.data = text[a.text[0]:a.text[1]:a.text[1]]
			} else {
				m.data = b.data[vals[c][0]:vals[c][1]:vals[c][1]]
			}
			if err := fn(&m); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rows returns the dataset's rows: a shard of rows an MDS shard, a row a
// member, its bytes in Row.Inline.
func (d *Dataset) Rows(bool) (dataset.PayloadSource, error) { return &source{d: d}, nil }

type source struct {
	d    *Dataset
	held dataset.Held // the pooled buffers of the batches in flight
}

// Release gives a written batch's buffer back.
func (s *source) Release(b *dataset.Batch) { s.held.Release(b) }

func (s *source) NumShards() int { return len(s.d.index.Shards) }

func (s *source) ShardName(shard int) string {
	return s.d.file(s.d.index.Shards[shard].RawData.Basename)
}

func (s *source) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	return s.d.scanShard(ctx, shard, true, func(b *batch) error {
		var h interface{ Release() } = noRelease{}
		if b.buf != nil {
			h = b.buf
		}
		rows := make([]dataset.Row, 0, b.samples(len(s.d.cols[shard]))*len(s.d.cols[shard]))
		err := s.d.members(shard, b, func(m *member) error {
			rows = append(rows, dataset.Row{Name: m.name, Kind: dataset.KindFile, Type: '0', Size: int64(len(m.data)),
				Mode: 0o644, DataFile: shard, Offset: -1, DataOffset: m.offset, Inline: m.data})
			return nil
		})
		if err != nil {
			h.Release()
			return err
		}
		return s.held.Emit(rows, h, emit)
	})
}

// noRelease holds a batch whose bytes are its own.
type noRelease struct{}

func (noRelease) Release() {}

// OpenPayload gives a row's bytes, which the row holds.
func (s *source) OpenPayload(r *dataset.Row) (io.Reader, error) {
	if r.Inline == nil {
		return nil, fmt.Errorf("%s: %q: a row of no MDS sample", s.d.dir, r.Name)
	}
	return bytes.NewReader(r.Inline), nil
}

// List calls fn for every member, in order, with its shard, sample and
// column's encoding.
func (d *Dataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	for i := range d.index.Shards {
		err := d.scanShard(ctx, i, false, func(b *batch) error {
			return d.members(i, b, func(m *member) error {
				return fn(registry.Entry{Name: string(m.name), Size: int64(len(m.data)), Fields: []registry.Field{
					{Key: "shard", Value: i}, {Key: "sample", Value: m.sample}, {Key: "encoding", Value: d.cols[i][m.col].encName}}})
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Size is the bytes a pass over the rows reads: the shards' raw bytes.
func (d *Dataset) Size() int64 {
	var n int64
	for _, s := range d.index.Shards {
		n += s.RawData.Bytes
	}
	return n
}

func (d *Dataset) Unit() string { return "members" }

// Warnings: hashes the index records that this package does not compute.
func (d *Dataset) Warnings() []string {
	seen := map[string]bool{}
	var w []string
	for _, s := range d.index.Shards {
		for _, f := range []*FileInfo{s.RawData, s.ZipData} {
			if f == nil {
				continue
			}
			for _, a := range newHashSet(f.Hashes).unchecked {
				if !seen[a] {
					seen[a] = true
					w = append(w, fmt.Sprintf("%s: hash %s is not checked (itarconv computes %v)", d.dir, a, sortedKeys(hashes)))
				}
			}
		}
	}
	return w
}

func (d *Dataset) Close() error { return nil }

// Detect tells whether path is an MDS dataset's directory (or its
// index.json) by content: an index of version 2 whose shards are MDS's.
func Detect(path string) bool {
	dir := path
	if st, err := os.Stat(path); err != nil {
		return false
	} else if !st.IsDir() {
		if filepath.Base(path) != IndexFile {
			return false
		}
		dir = filepath.Dir(path)
	}
	st, err := os.Stat(indexPath(dir))
	if err != nil || !st.Mode().IsRegular() || st.Size() > maxIndex {
		return false
	}
	ix, err := readIndex(dir)
	return err == nil && ix != nil
}

// claims: a directory holding an index.json beside shard.00000.mds (or
// its compressed file), however damaged.
func claims(path string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return false
	}
	if _, err := os.Lstat(indexPath(path)); err != nil {
		return false
	}
	m, _ := filepath.Glob(filepath.Join(path, "shard.00000.mds*"))
	return len(m) > 0
}

// damaged explains why a directory that claims MDS is not read as one.
func damaged(path string) error {
	_, err := readIndex(path)
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrCorrupt) || errors.Is(err, ErrUnsupported) {
		return err
	}
	return fmt.Errorf("%s: %w", path, err)
}
