package loaders

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/remote"
)

// WriteFile writes b to path through a temporary file renamed into place
// when complete.
func WriteFile(path string, b []byte) error {
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", f.Target(), err)
	}
	return f.CommitReplace()
}

// CommonDir is the deepest directory holding every path.
func CommonDir(paths []string) string {
	if len(paths) == 0 {
		return "."
	}
	dir := filepath.Dir(paths[0])
	for _, p := range paths[1:] {
		for !within(filepath.Dir(p), dir) {
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return dir
}

// within tells whether dir is root or below it (lexically).
func within(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// FirstFew joins up to three of the messages, saying how many more.
func FirstFew(msgs []string) string {
	if len(msgs) <= 3 {
		return strings.Join(msgs, "; ")
	}
	return strings.Join(msgs[:3], "; ") + "; and " + strconv.Itoa(len(msgs)-3) + " more"
}

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
	size, _, err := shardNow(ctx, path)
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

// shardNow is a shard's size and ETag as they are now (the ETag "" for a
// local file).
func shardNow(ctx context.Context, path string) (size int64, etag string, err error) {
	if remote.IsURL(path) {
		return remote.ClientFrom(ctx).Stat(ctx, path)
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", err
	}
	return st.Size(), "", nil
}
