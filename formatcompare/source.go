package formatcompare

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/cespare/xxhash/v2"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/tarfile"
)

// sample is one regular member of the source fold: the unit every format
// stores and every read check compares.
type sample struct {
	shard  int
	header int64 // tar header offset
	data   int64 // payload offset in the shard
	size   int64
	name   string // as the tar holds it
	path   string // Barecat's normalized path ("" when Barecat refuses it)
	hash   uint64 // xxh64 of the payload, read from the source tar
}

// source is the fold being benchmarked and its samples, in fold order.
type source struct {
	shards  []string
	fold    string
	samples []sample
	payload int64 // bytes of all samples
}

// collect is a sink that keeps the source's regular members, in order.
type collect struct{ s *source }

func (c collect) Prepare(*dataset.Batch) error { return nil }
func (c collect) EndShard(int) error           { return nil }
func (c collect) Write(b *dataset.Batch) error {
	for i := range b.Rows {
		r := &b.Rows[i]
		if r.Kind != dataset.KindFile {
			continue
		}
		name := string(r.Name)
		p, err := barecat.NormalizePath(name)
		if err != nil {
			p = ""
		}
		c.s.samples = append(c.s.samples, sample{shard: b.Shard, header: r.Offset, data: r.DataOffset,
			size: r.Size, name: name, path: p})
		c.s.payload += r.Size
	}
	return nil
}

// loadSource lists the fold's regular members and hashes every payload,
// reading the tars directly (not through any format's reader). This pass
// also brings the shards into the page cache.
func loadSource(ctx context.Context, shards []string, foldName string, workers int) (*source, error) {
	s := &source{shards: shards, fold: foldName}
	if err := dataset.Run(ctx, fold.NewTarShards(shards, tarfile.Options{}), collect{s}, dataset.Options{Workers: workers}); err != nil {
		return nil, err
	}
	if len(s.samples) == 0 {
		return nil, fmt.Errorf("%s: no regular members to read", shards[0])
	}
	files := make([]*os.File, len(shards))
	for i, p := range shards {
		f, err := os.Open(p)
		if err != nil {
			closeAll(files)
			return nil, err
		}
		files[i] = f
	}
	defer closeAll(files)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []byte
			for i := w; i < len(s.samples); i += workers {
				if ctx.Err() != nil {
					errs[w] = ctx.Err()
					return
				}
				sm := &s.samples[i]
				buf = grow(buf, sm.size)
				if _, err := files[sm.shard].ReadAt(buf, sm.data); err != nil && !(err == io.EOF && sm.size == 0) {
					errs[w] = fmt.Errorf("%s: offset %d: reading %q: %w", shards[sm.shard], sm.data, sm.name, err)
					return
				}
				sm.hash = xxhash.Sum64(buf)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

func closeAll(fs []*os.File) error {
	var first error
	for _, f := range fs {
		if f != nil {
			if err := f.Close(); first == nil {
				first = err
			}
		}
	}
	return first
}

func grow(b []byte, n int64) []byte {
	if int64(cap(b)) >= n {
		return b[:n]
	}
	return make([]byte, n)
}
