package fold

import (
	"context"
	"io"
	"io/fs"
	"os"

	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/remote"
)

// shardData is a shard open to read payloads: a local file, or a remote
// one read by ranged requests.
type shardData interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// openData opens shard fid of the fold (at path). A remote shard whose
// size and ETag the manifest recorded is opened with them, without a
// request: the first read then checks them (If-Match, Content-Range).
func (f *Fold) openData(ctx context.Context, fid int, path string) (shardData, error) {
	if !remote.IsURL(path) {
		sh, err := pathguard.Open(path)
		if err != nil {
			return nil, err
		}
		st, err := sh.Stat()
		if err != nil {
			sh.Close()
			return nil, err
		}
		return localData{sh, st.Size()}, nil
	}
	if fid < len(f.Sizes) && fid < len(f.ETags) {
		return remote.ClientFrom(ctx).OpenKnown(ctx, path, f.Sizes[fid], f.ETags[fid])
	}
	return remote.ClientFrom(ctx).Open(ctx, path)
}

type localData struct {
	*os.File
	size int64
}

func (l localData) Size() int64 { return l.size }

// ShardInfo stats a shard: a local file, or a remote one (its size and
// Last-Modified).
func ShardInfo(ctx context.Context, path string) (fs.FileInfo, error) {
	if !remote.IsURL(path) {
		return os.Stat(path)
	}
	f, err := remote.ClientFrom(ctx).Open(ctx, path)
	if err != nil {
		return nil, err
	}
	return f.Stat(), nil
}

// ShardSize is a shard's size: a remote one's as this run's scan saw it.
func ShardSize(ctx context.Context, path string) (int64, error) {
	if size, _, ok := remote.Known(path); ok {
		return size, nil
	}
	size, _, err := ShardNow(ctx, path)
	return size, err
}

// OpenShard opens a shard for reads at any offset (an io.Closer too).
func OpenShard(ctx context.Context, path string) (io.ReaderAt, error) {
	if remote.IsURL(path) {
		return remote.ClientFrom(ctx).Open(ctx, path)
	}
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err // not a nil *os.File in an interface
	}
	return f, nil
}

// ShardNow is a shard's size and ETag as they are now (the ETag "" for a
// local file), for verify to compare with the manifest's.
func ShardNow(ctx context.Context, path string) (size int64, etag string, err error) {
	if remote.IsURL(path) {
		return remote.ClientFrom(ctx).Stat(ctx, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", err
	}
	return st.Size(), "", nil
}

// shardsNow is shardNow of many shards, the remote ones asked of their
// servers all at once (as many requests in flight as the connections
// allow), under ctx.
func shardsNow(ctx context.Context, paths []string) (sizes []int64, etags []string, errs []error) {
	sizes, etags, errs = make([]int64, len(paths)), make([]string, len(paths)), make([]error, len(paths))
	var urls []string
	var at []int
	for i, p := range paths {
		if remote.IsURL(p) {
			urls, at = append(urls, p), append(at, i)
			continue
		}
		sizes[i], etags[i], errs[i] = ShardNow(ctx, p)
	}
	if len(urls) == 0 {
		return sizes, etags, errs
	}
	rs, re, err := remote.ClientFrom(ctx).StatAll(ctx, urls)
	for j, i := range at {
		sizes[i], etags[i] = rs[j], re[j]
		if err != nil && rs[j] == 0 && re[j] == "" {
			errs[i] = err
		}
	}
	return sizes, etags, errs
}
