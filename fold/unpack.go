package fold

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/itarconv/itarconv/formats/compressed"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
)

// UnpackOptions tune Unpack.
type UnpackOptions struct {
	Dir     string // the fold's directory (created if needed)
	Fold    string // default "train"
	Workers int    // shards decompressed at once (default 1)
	// Replace replaces an existing fold of that name, once the new one is
	// complete; without it, shards of the fold already there are refused
	// (ErrExists).
	Replace bool
	Index   IndexOptions // Stem and Contiguous
	Stdin   io.Reader    // read for the shard "-" (default os.Stdin)
}

// Unpack writes tar shards, compressed or not (or a tar stream, "-"), as
// an indexed fold of plain tar shards in opts.Dir: shard i of the fold,
// <fold>_NNNN.tar, is the bytes of input shard i, decompressed, as they
// are (no member is rewritten), then the fold's TARIDX. Shards are
// decompressed straight into the fold's directory, opts.Workers at once,
// and renamed into place with the index once all are complete: as with
// Write, the fold appears whole or not at all.
func Unpack(ctx context.Context, shards []string, opts UnpackOptions) (*WriteStats, error) {
	if opts.Fold == "" {
		opts.Fold = "train"
	}
	if len(shards) > taridx.MaxShards {
		return nil, fmt.Errorf("%d shards: a TARIDX fid addresses at most %d: %w", len(shards), taridx.MaxShards, ErrTooManyShards)
	}
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	stdin := opts.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	spool := compressed.NewSpool(opts.Dir, stdin)
	defer spool.Close()
	temps, err := plainCopies(ctx, spool, shards, opts)
	if err != nil {
		return nil, err
	}
	// Until the fold is in place, a failure removes every copy (the
	// spool's own go with it too; a renamed one is no longer there).
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	idx := filepath.Join(opts.Dir, opts.Fold+".taridx")
	x, ist, err := indexShards(ctx, temps, idx, IndexOptions{Stem: opts.Index.Stem, Contiguous: opts.Index.Contiguous, Workers: opts.Workers})
	if err != nil {
		return nil, err
	}
	if err := x.Finish(); err != nil {
		return nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	names := make([]string, len(temps))
	for i := range temps {
		names[i] = filepath.Join(opts.Dir, tarfile.ShardName(opts.Fold, i, len(temps), 4))
	}
	p := &Pending{dir: opts.Dir, fold: opts.Fold, replace: opts.Replace, names: names}
	stale, err := p.stale()
	if err == nil && len(stale) > 0 && !opts.Replace {
		err = fmt.Errorf("%s: %w %q that this run would not replace: %s; remove them, or replace the whole fold",
			opts.Dir, ErrExists, opts.Fold, listNames(stale))
	}
	if err == nil {
		err = syncAll(temps) // durable, and readable as any output is
	}
	if err != nil {
		x.Abort()
		return nil, err
	}
	st := &WriteStats{Skipped: map[string]int64{}, Index: ist, Members: ist.Members}
	for i, t := range temps {
		if err := os.Rename(t, names[i]); err != nil {
			for _, done := range names[:i] {
				os.Remove(done)
			}
			x.Abort()
			return nil, fmt.Errorf("renaming %s into place: %w", names[i], err)
		}
		if fi, err := os.Stat(names[i]); err == nil {
			st.Bytes += fi.Size()
		}
	}
	ist.Output = idx
	if err := x.Commit(); err != nil {
		for _, n := range names {
			os.Remove(n)
		}
		return nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	if err := removeStale(opts.Dir, opts.Fold, stale); err != nil {
		return nil, err
	}
	safefile.SyncDir(opts.Dir)
	st.Shards, st.Replaced = names, stale
	return st, nil
}

// plainCopies makes a temporary plain copy of every shard in opts.Dir,
// opts.Workers at once: a compressed shard (or the stream) decompressed
// by the spool, a plain one copied (by the kernel, where it can).
func plainCopies(ctx context.Context, spool *compressed.Spool, shards []string, opts UnpackOptions) ([]string, error) {
	temps := make([]string, len(shards))
	errs := make([]error, len(shards))
	work := make(chan int)
	var wg sync.WaitGroup
	for range max(opts.Workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if errs[i] = ctx.Err(); errs[i] != nil {
					continue
				}
				p, err := spool.Plain(ctx, shards[i])
				if err == nil && p == shards[i] {
					p, err = copyShard(shards[i], opts.Dir)
				}
				temps[i], errs[i] = p, err
			}
		}()
	}
	for i := range shards {
		work <- i
	}
	close(work)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for _, t := range temps {
				if t != "" && t != shards[i] {
					os.Remove(t)
				}
			}
			return nil, err
		}
	}
	return temps, nil
}

// copyShard copies a plain shard to a temporary file in dir.
func copyShard(path, dir string) (string, error) {
	in, err := pathguard.Open(path)
	if err != nil {
		return "", err
	}
	defer in.Close()
	out, err := os.CreateTemp(dir, safefile.TempName(filepath.Base(path)))
	if err != nil {
		return "", fmt.Errorf("copying %s into %s: %w", path, dir, err)
	}
	_, err = io.Copy(out, in)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("copying %s into %s: %w", path, dir, err)
	}
	return out.Name(), nil
}

// syncAll makes the files durable, with an output's permissions, before
// they are renamed into place.
func syncAll(paths []string) error {
	for _, p := range paths {
		f, err := os.OpenFile(p, os.O_RDWR, 0)
		if err != nil {
			return err
		}
		err = f.Chmod(0o644)
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}
