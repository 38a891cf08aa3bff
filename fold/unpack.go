package fold

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/spool"
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
	Index   IndexOptions // Stem, Contiguous and Scan (IgnoreZeros: concatenated archives)
	Stdin   io.Reader    // read for the shard "-" (default os.Stdin)
	// Progress counts the members as each shard, decompressed, is indexed.
	Progress func(dataset.Progress)
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
	names := make([]string, len(shards))
	for i := range shards {
		names[i] = filepath.Join(opts.Dir, tarfile.ShardName(opts.Fold, i, len(shards), 4))
	}
	// Shards of an existing fold of that name are refused before any
	// work, unless it is to be replaced.
	stale, err := checkStale(opts.Dir, opts.Fold, names, opts.Replace)
	if err != nil {
		return nil, err
	}
	// One pass: each worker decompresses a shard straight into the fold's
	// directory, syncs it, and reads its headers for the index while the
	// other decompresses the next.
	sp := spool.New(opts.Dir, stdin)
	sp.Durable = true
	defer sp.Close()
	idx := filepath.Join(opts.Dir, opts.Fold+".taridx")
	x, ist, err := indexShards(ctx, shards, idx, IndexOptions{Stem: opts.Index.Stem, Contiguous: opts.Index.Contiguous, Scan: opts.Index.Scan,
		Workers: opts.Workers, Progress: opts.Progress, Memory: opts.Index.Memory}, sp)
	if err != nil {
		return nil, err
	}
	temps, err := plainCopies(ctx, sp, shards)
	if err == nil {
		err = x.Finish()
	}
	if err != nil {
		x.Abort()
		return nil, err
	}
	// Until the fold is in place, a failure removes every copy (a renamed
	// one is no longer there).
	defer func() {
		for _, t := range temps {
			os.Remove(t)
		}
	}()
	st := &WriteStats{Skipped: map[string]int64{}, Index: ist, Members: ist.Members}
	for i, t := range temps {
		rename := safefile.RenameNoReplace
		if opts.Replace {
			rename = os.Rename
		}
		if err := rename(t, names[i]); err != nil {
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
	if err := x.Commit(); err != nil {
		for _, n := range names {
			os.Remove(n)
		}
		return nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	if err := commitManifest(idx, nil); err != nil { // no earlier manifest may name other shards
		return nil, err
	}
	if err := removeStale(opts.Dir, opts.Fold, stale); err != nil {
		return nil, err
	}
	safefile.SyncDir(opts.Dir)
	st.Shards, st.Replaced = names, stale
	return st, nil
}

// plainCopies gives the spool's copy of every shard (made by now), and
// copies a plain shard, which the spool leaves as it is, to a temporary
// file in the spool's directory.
func plainCopies(ctx context.Context, sp *spool.Spool, shards []string) ([]string, error) {
	temps := make([]string, len(shards))
	for i, s := range shards {
		p, err := sp.Plain(ctx, s)
		if err == nil && p == s {
			p, err = copyShard(s, sp.Dir)
		}
		if err != nil {
			for _, t := range temps[:i] {
				os.Remove(t)
			}
			return nil, err
		}
		temps[i] = p
	}
	return temps, nil
}

// copyShard copies a plain shard to a temporary file in dir, durable as
// the spool's copies are.
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
	if err == nil {
		if err = out.Chmod(0o644); err == nil {
			err = out.Sync()
		}
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(out.Name())
		return "", fmt.Errorf("copying %s into %s: %w", path, dir, err)
	}
	return out.Name(), nil
}
