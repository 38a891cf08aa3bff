package fold

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/spool"
)

// UnpackOptions tune Unpack.
type UnpackOptions struct {
	Dir string // the fold's directory (created if needed)
	// Fold, when set, names the fold and its shards glzn's way:
	// <fold>_NNNN.tar. Without it, the shards keep their own names,
	// decompressed (imagenet-val-000000.tar.gz -> imagenet-val-000000.tar),
	// and the fold is named as shardset names a fold of them
	// (imagenet-val); where they cannot be kept (standard input, names
	// that give several folds), the fold is "train" (UnpackNaming).
	Fold string
	// Name, when set, names the shards by a pattern in WebDataset's
	// ShardWriter notation instead ("imagenet-val-%06d.tar"; the fold is
	// named after its prefix: PatternFold).
	Name    string
	Workers int // shards decompressed at once (default 1)
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
// an indexed fold of plain tar shards in opts.Dir: shard i of the fold
// (named as UnpackNaming says: its own name, decompressed, or
// <fold>_NNNN.tar) is the bytes of input shard i, decompressed, as they
// are (no member is rewritten), then the fold's TARIDX, with a manifest
// naming the shards where glzn's rule would not find them. Shards are
// decompressed straight into the fold's directory, opts.Workers at once,
// and renamed into place with the index once all are complete: as with
// Write, the fold appears whole or not at all.
func Unpack(ctx context.Context, shards []string, opts UnpackOptions) (*WriteStats, error) {
	if len(shards) > taridx.MaxShards {
		return nil, fmt.Errorf("%d shards: a TARIDX fid addresses at most %d: %w", len(shards), taridx.MaxShards, ErrTooManyShards)
	}
	// The names are settled, and a clash refused, before anything is
	// written.
	naming, err := UnpackNaming(shards, opts)
	if err != nil {
		return nil, err
	}
	opts.Fold = naming.Fold
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, err
	}
	stdin := opts.Stdin
	if stdin == nil {
		stdin = os.Stdin
	}
	names := make([]string, len(shards))
	for i, n := range naming.Names {
		names[i] = filepath.Join(opts.Dir, n)
	}
	// Shards of an existing fold of that name are refused before any
	// work, unless it is to be replaced.
	stale, err := checkStale(opts.Dir, opts.Fold, names, !naming.glzn, opts.Replace)
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
	manifest, err := foldManifest(idx, names, !naming.glzn)
	if err == nil {
		if err = x.Commit(); err != nil {
			err = fmt.Errorf("indexing the new fold: %w", err)
			if manifest != nil {
				manifest.Abort()
			}
		}
	} else {
		x.Abort()
	}
	if err != nil {
		for _, n := range names {
			os.Remove(n)
		}
		return nil, err
	}
	if err := commitManifest(idx, manifest); err != nil { // or remove an earlier one: it would name other shards
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
