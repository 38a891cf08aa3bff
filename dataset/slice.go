package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ShardSizer is a Source that knows how many bytes reading each shard
// takes, so that a partitioned run balances its tasks by bytes rather than
// by shard counts (the tar source: each shard's file size).
type ShardSizer interface {
	ShardSize(shard int) int64
}

// ShardSizes returns each shard's size as src tells it (ShardSizer), or 1
// each for a source that does not.
func ShardSizes(src Source) []int64 {
	sizes := make([]int64, src.NumShards())
	sz, ok := src.(ShardSizer)
	for i := range sizes {
		sizes[i] = 1
		if ok {
			sizes[i] = max(sz.ShardSize(i), 0)
		}
	}
	return sizes
}

// Slice returns the shards lo..hi-1 of src as a source of their own,
// numbered from 0: one task's share of a partitioned run. Rows are src's
// own (OpenPayload and Release go back to it unchanged), and the result
// implements ShardFiles and FileRegions exactly when src does, so that a
// sink takes the same paths through it as through src. Close closes src.
func Slice(src PayloadSource, lo, hi int) (PayloadSource, error) {
	if lo < 0 || hi < lo || hi > src.NumShards() {
		return nil, fmt.Errorf("shards %d to %d of a source of %d: %w", lo, hi, src.NumShards(), errBadSlice)
	}
	s := &slice{src: src, lo: lo, hi: hi}
	files, isFiles := src.(ShardFiles)
	regions, isRegions := src.(FileRegions)
	switch {
	case isFiles && isRegions:
		return &sliceFilesRegions{sliceFiles{s, files}, regions}, nil
	case isFiles:
		return &sliceFiles{s, files}, nil
	case isRegions:
		return &sliceRegions{s, regions}, nil
	}
	return s, nil
}

var errBadSlice = errors.New("no such range of shards")

type slice struct {
	src    PayloadSource
	lo, hi int
}

func (s *slice) NumShards() int                        { return s.hi - s.lo }
func (s *slice) ShardName(shard int) string            { return s.src.ShardName(s.lo + shard) }
func (s *slice) OpenPayload(r *Row) (io.Reader, error) { return s.src.OpenPayload(r) }

func (s *slice) Scan(ctx context.Context, shard int, emit func([]Row) error) error {
	return s.src.Scan(ctx, s.lo+shard, emit)
}

func (s *slice) ShardSize(shard int) int64 {
	if sz, ok := s.src.(ShardSizer); ok {
		return sz.ShardSize(s.lo + shard)
	}
	return 1
}

// Release hands a written batch back to src under src's shard number.
func (s *slice) Release(b *Batch) {
	if r, ok := s.src.(Releaser); ok {
		r.Release(&Batch{Shard: s.lo + b.Shard, Rows: b.Rows, Prep: b.Prep, Bytes: b.Bytes})
	}
}

func (s *slice) Close() error {
	if c, ok := s.src.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

type sliceFiles struct {
	*slice
	files ShardFiles
}

func (s *sliceFiles) ShardFile(shard int) (*os.File, error) { return s.files.ShardFile(s.lo + shard) }

type sliceRegions struct {
	*slice
	regions FileRegions
}

func (s *sliceRegions) PayloadFile(r *Row) (*os.File, int64, bool) { return s.regions.PayloadFile(r) }

type sliceFilesRegions struct {
	sliceFiles
	regions FileRegions
}

func (s *sliceFilesRegions) PayloadFile(r *Row) (*os.File, int64, bool) {
	return s.regions.PayloadFile(r)
}
