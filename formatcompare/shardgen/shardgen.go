package shardgen

import (
	"archive/tar"
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// Dataset describes a set of generated shards. Members come in pairs that
// share a stem, sNNNNNNN.jpg then sNNNNNNN.cls, as a WebDataset sample does,
// and every payload size is drawn uniformly from [MinSize, MaxSize].
type Dataset struct {
	Name    string // label in reports
	Fold    string // shards are <Fold>_0000.tar, <Fold>_0001.tar, ...
	Members int    // total members; must be even (whole samples)
	Shards  int
	MinSize int
	MaxSize int
	Seed    int64
}

// Scaled returns a copy of d with members members (rounded down to whole
// samples, at least one per shard), for smoke runs and unit benchmarks.
func (d Dataset) Scaled(members int) Dataset {
	members &^= 1
	if members < 2*d.Shards {
		members = 2 * d.Shards
	}
	d.Members = members
	return d
}

// sampleRange is the half-open range of sample numbers stored in shard i.
// Samples are split as evenly as possible, the first shards taking the
// remainder, so that a sample's two members never straddle shards.
func (d Dataset) sampleRange(i int) (first, end int) {
	samples := d.Members / 2
	per, extra := samples/d.Shards, samples%d.Shards
	first = i*per + min(i, extra)
	end = first + per
	if i < extra {
		end++
	}
	return first, end
}

// ShardMembers is the number of members in shard i.
func (d Dataset) ShardMembers(i int) int {
	first, end := d.sampleRange(i)
	return 2 * (end - first)
}

// ShardPath is the path of shard i under dir.
func (d Dataset) ShardPath(dir string, i int) string {
	return filepath.Join(dir, fmt.Sprintf("%s_%04d.tar", d.Fold, i))
}

// modTime is fixed so that the bytes depend on the seed alone.
var modTime = time.Unix(1_700_000_000, 0)

// WriteShard writes shard i of d to w. Each shard has its own generator,
// seeded from the dataset's seed and the shard number, so shards can be
// written in any order or in parallel and still come out identical. It
// stops with ctx's error, between two samples, when ctx is done.
func (d Dataset) WriteShard(ctx context.Context, w io.Writer, i int) error {
	if d.Members%2 != 0 || d.Shards < 1 || d.MinSize < 0 || d.MaxSize < d.MinSize {
		return fmt.Errorf("dataset %s: bad parameters %+v", d.Name, d)
	}
	rng := rand.New(rand.NewSource(d.Seed*1_000_003 + int64(i)))
	// One random buffer serves every payload of the shard: generating fresh
	// random bytes per member would dominate the generation time, and the
	// indexer never looks at payloads anyway. The first bytes of each
	// payload are stamped with the member number so no two are equal.
	payload := make([]byte, max(d.MaxSize, 8))
	rng.Read(payload)
	tw := tar.NewWriter(w)
	hdr := tar.Header{
		Typeflag: tar.TypeReg,
		Mode:     0o644,
		ModTime:  modTime,
		Format:   tar.FormatUSTAR,
	}
	first, end := d.sampleRange(i)
	for s := first; s < end; s++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, ext := range [2]string{"jpg", "cls"} {
			size := d.MinSize + rng.Intn(d.MaxSize-d.MinSize+1)
			hdr.Name = fmt.Sprintf("s%07d.%s", s, ext)
			hdr.Size = int64(size)
			if err := tw.WriteHeader(&hdr); err != nil {
				return err
			}
			body := payload[:size]
			if size >= 8 {
				n := uint64(s)<<1 | uint64(len(ext)&1)
				for k := range 8 {
					body[k] = byte(n >> (8 * k))
				}
			}
			if _, err := tw.Write(body); err != nil {
				return err
			}
		}
	}
	return tw.Close()
}

// Generate writes every shard of d into dir (created if needed), two
// shards at a time, and returns their paths in fid order. When ctx is done
// it stops, leaving no partial shard, and returns ctx's error.
func (d Dataset) Generate(ctx context.Context, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, d.Shards)
	errs := make([]error, d.Shards)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range paths {
		paths[i] = d.ShardPath(dir, i)
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = d.writeShardFile(ctx, paths[i], i)
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return paths, nil
}

func (d Dataset) writeShardFile(ctx context.Context, path string, i int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	// archive/tar issues a write per header, payload and padding: without a
	// large buffer those would be millions of system calls for dataset B.
	bw := bufio.NewWriterSize(f, 1<<20)
	err = d.WriteShard(ctx, bw, i)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("generating %s: %w", path, err)
	}
	return nil
}
