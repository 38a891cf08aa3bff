package loaders

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

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

// WriteFileTo writes what wt writes to path, as WriteFile does, with no
// copy of it in memory; where ctx carries a safefile.Group (a shard's
// indexer is given one by the pass), the file is put in place, and
// synced, with the group's others.
func WriteFileTo(ctx context.Context, path string, wt io.WriterTo) error {
	f, err := safefile.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	_, err = wt.WriteTo(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		f.Abort()
		return fmt.Errorf("writing %s: %w", f.Target(), err)
	}
	return f.CommitReplaceIn(ctx)
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

// TempDir is where a shard's index at out keeps what waits in a temporary
// file: beside it, or the system's temporary directory for an index that
// is no local file (a URL).
func TempDir(out string) string {
	if remote.IsURL(out) {
		return ""
	}
	return filepath.Dir(out)
}
