package fold

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/dali"
	"github.com/itarconv/itarconv/internal/safefile"
)

// ErrNoIndex: a loader writes no index for such a shard (DALI: one
// without a regular member).
var ErrNoIndex = errors.New("the loader indexes no such shard")

// A ShardIndex is another loader's index of each tar shard of a fold,
// written from the same pass over the headers as the fold's TARIDX.
type ShardIndex struct {
	Name string
	// Path names the index of a shard.
	Path func(shard string) string
	// New starts the index of one shard.
	New func() ShardIndexer
}

// ShardIndexer builds one shard's index: Add takes the shard's rows in tar
// order; Bytes gives the file, for a shard whose content ends at end, or an
// error wrapping ErrNoIndex.
type ShardIndexer interface {
	Add(r *dataset.Row)
	Bytes(end int64) ([]byte, error)
}

// DALI is DALI's webdataset index of each shard (package dali), named as
// wds2idx names it: beside the shard, or in outDir when it is not "".
func DALI(outDir string) ShardIndex {
	return ShardIndex{
		Name: "dali",
		Path: func(shard string) string { return besideOrIn(dali.IndexPath(shard), outDir) },
		New:  func() ShardIndexer { return &daliIndexer{} },
	}
}

func besideOrIn(path, outDir string) string {
	if outDir == "" {
		return path
	}
	return filepath.Join(outDir, filepath.Base(path))
}

type daliIndexer struct{ b dali.Builder }

func (d *daliIndexer) Add(r *dataset.Row) {
	if r.Kind == dataset.KindFile {
		d.b.Add(string(r.Name), r.DataOffset, r.Size)
	}
}

func (d *daliIndexer) Bytes(int64) ([]byte, error) {
	var out bytes.Buffer
	if _, err := d.b.WriteTo(&out); err != nil {
		if errors.Is(err, dali.ErrEmpty) {
			err = fmt.Errorf("%w: %w", ErrNoIndex, err)
		}
		return nil, err
	}
	return out.Bytes(), nil
}

// ShardIndexStats counts the shard indexes a pass wrote, by format.
type ShardIndexStats struct {
	Written map[string]int      `json:"written"`
	None    map[string][]string `json:"not_indexed"` // shards a loader indexes not, and why
}

// shardIndexSink writes each shard's loader indexes once the shard is
// read; its rows are the tar source's own.
type shardIndexSink struct {
	kinds []ShardIndex
	src   *TarShards
	open  map[int][]ShardIndexer
	stats *ShardIndexStats
}

func newShardIndexSink(kinds []ShardIndex, src *TarShards) *shardIndexSink {
	return &shardIndexSink{kinds: kinds, src: src, open: map[int][]ShardIndexer{},
		stats: &ShardIndexStats{Written: map[string]int{}, None: map[string][]string{}}}
}

func (s *shardIndexSink) Prepare(*dataset.Batch) error { return nil }

func (s *shardIndexSink) indexers(shard int) []ShardIndexer {
	ix := s.open[shard]
	if ix == nil {
		for _, k := range s.kinds {
			ix = append(ix, k.New())
		}
		s.open[shard] = ix
	}
	return ix
}

func (s *shardIndexSink) Write(b *dataset.Batch) error {
	ix := s.indexers(b.Shard)
	for i := range b.Rows {
		for _, x := range ix {
			x.Add(&b.Rows[i])
		}
	}
	return nil
}

// EndShard writes the shard's indexes, each to a temporary file renamed
// into place when complete: an index describes its one shard, so it is
// right whatever becomes of the others.
func (s *shardIndexSink) EndShard(shard int) error {
	ix := s.indexers(shard)
	delete(s.open, shard)
	path := s.src.Paths[shard]
	for k, x := range ix {
		b, err := x.Bytes(s.src.Stats[shard].End)
		if errors.Is(err, ErrNoIndex) {
			s.stats.None[s.kinds[k].Name] = append(s.stats.None[s.kinds[k].Name], fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %s index: %w", path, s.kinds[k].Name, err)
		}
		f, err := safefile.Create(s.kinds[k].Path(path))
		if err != nil {
			return err
		}
		if _, err := f.Write(b); err != nil {
			f.Abort()
			return fmt.Errorf("writing %s: %w", f.Target(), err)
		}
		if err := f.Commit(); err != nil {
			return err
		}
		s.stats.Written[s.kinds[k].Name]++
	}
	return nil
}

// tee hands every batch to several sinks. Only the first may use a
// batch's Prep.
type tee []dataset.Sink

func (t tee) Prepare(b *dataset.Batch) error {
	for _, s := range t {
		if err := s.Prepare(b); err != nil {
			return err
		}
	}
	return nil
}

func (t tee) Write(b *dataset.Batch) error {
	for _, s := range t {
		if err := s.Write(b); err != nil {
			return err
		}
	}
	return nil
}

func (t tee) EndShard(shard int) error {
	for _, s := range t {
		if err := s.EndShard(shard); err != nil {
			return err
		}
	}
	return nil
}
