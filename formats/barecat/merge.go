package barecat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/safefile"
)

// MergeStats describes how MergeParts made the archive out of the parts.
// Barecat keeps a file's bytes as they are wherever it lies, so the merge
// never rewrites payload bytes: each shard of the archive is a part's
// local shard unchanged (a hard link), or ranges of the parts' shards
// copied one after the other (in the kernel where the system allows).
// The index is always built anew from the parts' rows.
type MergeStats struct {
	Parts        int   `json:"parts"`
	Rows         int64 `json:"rows"`          // file and directory rows put into the index
	ShardsLinked int   `json:"shards_linked"` // shards that are a part's shard, linked
	ShardsCopied int   `json:"shards_copied"` // shards assembled from ranges of the parts' shards
	BytesLinked  int64 `json:"bytes_linked"`
	BytesCopied  int64 `json:"bytes_copied"`
}

// MergeParts joins the parts (their directories, in task order) into out:
// the same shard files byte for byte as WriteRows writes over all the rows,
// and an index whose rows, in every table, are the single run's (the
// root directory's mtime excepted: WriteRows takes the time it starts,
// unless a row gives the root's metadata). The SQLite file itself need
// not be byte-identical.
//
// It reads every part's rows file first, checking it whole, and works out
// where the archive's shards start (WriteRows' rule over the files' sizes
// across the parts), so that a damaged or missing part is reported before
// anything is written. It then builds each shard from the parts' shards
// (os.Link where one is the shard unchanged, else copies of ranges with
// internal/filecopy) while it puts the rows into the index through the
// Writer, in order: duplicate paths, a path both a file and a directory,
// and the directories' counts come out as in the single run. Everything
// is written under temporary names and renamed into place only when
// complete (opts.Overwrite as for WriteRows); the parts are not changed.
// It returns the RowsStats WriteRows would.
func MergeParts(ctx context.Context, parts []string, out string, opts RowsOptions) (*RowsStats, *MergeStats, error) {
	if len(parts) == 0 {
		return nil, nil, fmt.Errorf("barecat: merging into %s: no parts: %w", out, ErrPart)
	}
	if opts.ShardSize < 0 {
		return nil, nil, fmt.Errorf("barecat: negative shard size limit %d", opts.ShardSize)
	}
	plan, err := planMerge(ctx, parts, opts.ShardSize)
	if err != nil {
		return nil, nil, err
	}
	w, err := CreateContext(ctx, out, WriterOptions{ShardSizeLimit: opts.ShardSize, Overwrite: opts.Overwrite, Memory: opts.Memory})
	if err != nil {
		return nil, nil, err
	}
	ms := &MergeStats{Parts: len(parts)}
	tmps := make([]string, len(plan.shards))
	for i, sh := range plan.shards {
		if tmps[i], err = w.adoptShard(sh.size); err != nil {
			w.Abort()
			return nil, nil, err
		}
	}
	// The shards are built while the index is: the one is the disk's
	// work, the other the CPU's.
	// Either failing stops the other.
	bctx, cancelBuild := context.WithCancel(ctx)
	defer cancelBuild()
	rctx, cancelReplay := context.WithCancel(ctx)
	defer cancelReplay()
	built := make(chan error, 1)
	go func() {
		err := plan.build(bctx, tmps, opts.Workers, ms)
		if err != nil {
			cancelReplay()
		}
		built <- err
	}()
	stats, err := plan.replay(rctx, w, out, ms)
	if err != nil {
		cancelBuild()
	}
	if berr := <-built; berr != nil && (err == nil || ctx.Err() == nil && errors.Is(err, context.Canceled)) {
		err = berr
	}
	if err != nil {
		w.Abort()
		return nil, nil, err
	}
	stats.Shards = w.NumShards()
	if err := w.Close(); err != nil {
		if errors.Is(err, ErrDuplicate) {
			err = repeatedErr(err, "", out)
		}
		return nil, nil, err
	}
	return stats, ms, nil
}

// mergePlan is what the parts' rows files say: each part's local shards,
// and the archive's shards as ranges of them.
type mergePlan struct {
	limit  int64
	parts  []*mergePart
	shards []outShard
}

type mergePart struct {
	dir    string
	rows   string   // its rows file
	shards []string // its local shard files
	sum    *partSummary
}

// outShard is one shard of the archive: ranges of the parts' local
// shards, one after the other.
type outShard struct {
	size   int64
	ranges []partRange
}

type partRange struct {
	part, shard int
	off, n      int64
}

// placer is WriteRows' rule for cutting shards: a file that would take
// the current shard past the limit starts the next one, unless the shard
// is empty.
type placer struct {
	limit int64
	n     int   // shards started
	size  int64 // bytes in the current one
}

func (p *placer) place(size int64) (shard int, off int64, started bool) {
	if p.n == 0 || p.size > 0 && size > p.limit-p.size {
		p.n++
		p.size = 0
		started = true
	}
	off = p.size
	p.size += size
	return p.n - 1, off, started
}

// openPart opens a part's rows file for reading.
func (mp *mergePart) open() (*os.File, *partReader, error) {
	f, err := os.Open(mp.rows)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("%s: no rows file (not a part, or an incomplete one): %w", mp.dir, ErrPart)
		}
		return nil, nil, fmt.Errorf("%w (%w)", err, ErrPart)
	}
	pr, err := newPartReader(f, mp.rows)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, pr, nil
}

// planMerge reads every part's rows file through, checks it and its
// local shards, and cuts the archive's shards.
func planMerge(ctx context.Context, dirs []string, shardSize int64) (*mergePlan, error) {
	plan := &mergePlan{limit: shardSize}
	if plan.limit == 0 {
		plan.limit = UnlimitedShardSize
	}
	pl := placer{limit: plan.limit}
	for pi, dir := range dirs {
		mp := &mergePart{dir: dir, rows: filepath.Join(dir, partRowsName)}
		plan.parts = append(plan.parts, mp)
		f, pr, err := mp.open()
		if err != nil {
			return nil, err
		}
		for n := 0; ; n++ {
			if n%4096 == 0 && ctx.Err() != nil {
				f.Close()
				return nil, ctx.Err()
			}
			at := pr.off
			r, ls, loff, err := pr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return nil, err
			}
			if r.kind != recFile {
				continue
			}
			if r.size > plan.limit {
				f.Close()
				return nil, pr.errAt(at, "file %s of %d bytes, past the shard size limit %d", human.Name(r.path), r.size, plan.limit)
			}
			gs, _, started := pl.place(r.size)
			if started {
				plan.shards = append(plan.shards, outShard{})
			}
			sh := &plan.shards[gs]
			sh.size += r.size
			if r.size == 0 {
				continue
			}
			if k := len(sh.ranges) - 1; k >= 0 && sh.ranges[k].part == pi && sh.ranges[k].shard == ls && sh.ranges[k].off+sh.ranges[k].n == loff {
				sh.ranges[k].n += r.size
			} else {
				sh.ranges = append(sh.ranges, partRange{part: pi, shard: ls, off: loff, n: r.size})
			}
		}
		f.Close()
		mp.sum = pr.sum
		if mp.sum.shardSize != shardSize {
			return nil, fmt.Errorf("%s: written with shard size %d, merged with %d: %w", mp.rows, mp.sum.shardSize, shardSize, ErrPart)
		}
		for j, want := range mp.sum.shards {
			name := filepath.Join(dir, partShardName(j))
			st, err := os.Stat(name)
			switch {
			case err != nil:
				return nil, fmt.Errorf("%s: local shard %d: %w (%w)", dir, j, err, ErrPart)
			case !st.Mode().IsRegular():
				return nil, fmt.Errorf("%s: not a regular file: %w", name, ErrPart)
			case st.Size() != want:
				return nil, fmt.Errorf("%s: %d bytes, the rows file says %d (truncated or changed): %w", name, st.Size(), want, ErrPart)
			}
			mp.shards = append(mp.shards, name)
		}
		if _, err := os.Stat(filepath.Join(dir, partShardName(len(mp.shards)))); err == nil {
			return nil, fmt.Errorf("%s: %s, which the rows file does not list: %w", dir, partShardName(len(mp.shards)), ErrPart)
		}
	}
	return plan, nil
}

// replay puts every part's rows into the index, in order, as WriteRows'
// sink does with the source's rows: the Writer decides duplicates,
// conflicts and the directories' counts.
func (plan *mergePlan) replay(ctx context.Context, w *Writer, out string, ms *MergeStats) (*RowsStats, error) {
	stats := &RowsStats{Output: out, Skipped: map[string]int64{}}
	pl := placer{limit: plan.limit}
	for _, mp := range plan.parts {
		f, pr, err := mp.open()
		if err != nil {
			return nil, err
		}
		err = replayPart(ctx, w, mp, pr, &pl, stats)
		f.Close()
		if err != nil {
			return nil, err
		}
		for k, n := range mp.sum.skipped {
			stats.Skipped[k] += n
		}
		ms.Rows += mp.sum.records
	}
	return stats, nil
}

func replayPart(ctx context.Context, w *Writer, mp *mergePart, pr *partReader, pl *placer, stats *RowsStats) error {
	for n := int64(0); ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		r, _, _, err := pr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		where := func(err error) error {
			return fmt.Errorf("%s (row %d): %s: %w", mp.dir, n, human.Name(r.path), err)
		}
		if r.kind == recDir {
			d := Dir{Path: r.path, Mode: r.mode, HasMode: r.flags&hasMode != 0, UID: r.uid, HasUID: r.flags&hasUID != 0,
				GID: r.gid, HasGID: r.flags&hasGID != 0, MtimeNs: r.mtimeNs, HasMtime: r.flags&hasMtime != 0}
			if err := w.AddDir(d); err != nil && !errors.Is(err, ErrDuplicate) {
				return where(err)
			} else if err == nil {
				stats.Dirs++
			}
			continue
		}
		shard, off, _ := pl.place(r.size)
		err = w.AddExternal(File{Path: r.path, Shard: shard, Offset: off, Size: r.size, CRC32C: r.crc, HasCRC: true,
			Mode: r.mode, HasMode: r.flags&hasMode != 0, UID: r.uid, HasUID: r.flags&hasUID != 0,
			GID: r.gid, HasGID: r.flags&hasGID != 0, MtimeNs: r.mtimeNs, HasMtime: r.flags&hasMtime != 0})
		if errors.Is(err, ErrDuplicate) {
			return repeatedErr(err, r.path, fmt.Sprintf("%s (row %d)", mp.dir, n))
		}
		if err != nil {
			return where(err)
		}
		stats.Files++
		stats.Bytes += r.size
	}
}

// adoptShard makes a file MergeParts builds the archive's next shard, of
// size bytes, and returns the temporary name it is to be built at: like
// a shard Add fills, it is renamed into place on Close and removed on
// Abort. Nothing is at that name yet.
func (w *Writer) adoptShard(size int64) (string, error) {
	if err := w.usable(); err != nil {
		return "", err
	}
	n := len(w.shards)
	if n >= maxShards {
		return "", newErr(w.path, "", ErrTooLarge, "more than %d shards", maxShards)
	}
	var r [8]byte
	rand.Read(r[:])
	tmp := filepath.Join(w.dir, strings.Replace(safefile.TempName(ShardPath(w.base, n)), "*", hex.EncodeToString(r[:]), 1))
	w.shards = append(w.shards, &shardOut{tmp: tmp, size: size})
	w.cur = nil
	return tmp, nil
}

// build makes every shard of the archive at its temporary name, on
// workers goroutines (the shards are independent).
func (plan *mergePlan) build(ctx context.Context, tmps []string, workers int, ms *MergeStats) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(1, min(workers, len(tmps)))
	var next atomic.Int64
	var linked, copied, bytesLinked, bytesCopied atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for k := range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(tmps) {
					return
				}
				link, err := plan.buildShard(ctx, i, tmps[i])
				if err != nil {
					errs[k] = err
					return
				}
				if link {
					linked.Add(1)
					bytesLinked.Add(plan.shards[i].size)
				} else {
					copied.Add(1)
					bytesCopied.Add(plan.shards[i].size)
				}
			}
		})
	}
	wg.Wait()
	ms.ShardsLinked, ms.ShardsCopied = int(linked.Load()), int(copied.Load())
	ms.BytesLinked, ms.BytesCopied = bytesLinked.Load(), bytesCopied.Load()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// buildShard makes shard i at tmp: a hard link to a part's local shard
// when it is that shard whole, else the ranges copied.
func (plan *mergePlan) buildShard(ctx context.Context, i int, tmp string) (linked bool, err error) {
	sh := plan.shards[i]
	if len(sh.ranges) == 1 {
		r := sh.ranges[0]
		mp := plan.parts[r.part]
		if r.off == 0 && r.n == mp.sum.shards[r.shard] {
			if err := os.Link(mp.shards[r.shard], tmp); err == nil {
				return true, nil
			}
			// Another file system, or one without hard links: copied.
		}
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	err = plan.copyRanges(ctx, f, sh.ranges)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return false, err
}

func (plan *mergePlan) copyRanges(ctx context.Context, dst *os.File, ranges []partRange) error {
	var at int64
	var src *os.File
	srcPart, srcShard := -1, -1
	defer func() {
		if src != nil {
			src.Close()
		}
	}()
	for _, r := range ranges {
		if r.part != srcPart || r.shard != srcShard {
			if src != nil {
				src.Close()
			}
			var err error
			if src, err = os.Open(plan.parts[r.part].shards[r.shard]); err != nil {
				return err
			}
			srcPart, srcShard = r.part, r.shard
		}
		// In pieces, each handed to writeback once copied, so that the
		// disk works while the rest is copied and the final fsync has
		// little left to wait for (as the Writer does).
		for done := int64(0); done < r.n; {
			if err := ctx.Err(); err != nil {
				return err
			}
			k := min(r.n-done, writebackChunk)
			if _, err := filecopy.RangeContext(ctx, dst, at, src, r.off+done, k); err != nil {
				return fmt.Errorf("%s: %w", plan.parts[r.part].dir, err)
			}
			if fsync {
				startWriteback(dst, at, k)
			}
			at += k
			done += k
		}
	}
	return nil
}
