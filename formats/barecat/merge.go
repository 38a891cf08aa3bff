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
// Each part's local shards become the archive's next shards as they are
// (a hard link, renamed into place with the index), so the merge moves no
// payload bytes; a shard is copied (in the kernel where the system allows)
// only where the file system has no hard links or the part lies on
// another one. The index is always built anew from the parts' rows.
type MergeStats struct {
	Parts        int   `json:"parts"`
	Rows         int64 `json:"rows"`          // file and directory rows put into the index
	ShardsLinked int   `json:"shards_linked"` // shards that are a part's shard, linked
	ShardsCopied int   `json:"shards_copied"` // shards copied from a part's shard
	BytesLinked  int64 `json:"bytes_linked"`
	BytesCopied  int64 `json:"bytes_copied"`
}

// MergeParts joins the parts (their directories, in task order) into out:
// the same files, with the same paths, bytes and metadata, in the same
// order as WriteRows writes over all the rows, and an index whose
// directories' rows are the single run's (the root directory's mtime
// excepted: WriteRows takes the time it starts, unless a row gives the
// root's metadata). The shard boundaries may differ from the single
// run's: the archive's shards are the parts' local shards in task order
// (each within the shard size limit), so a part's last shard may be
// smaller than the limit allows, and the files' shard numbers and offsets
// are those of the part's shard they lie in.
//
// It reads every part's rows file first, checking it whole, and its local
// shards' sizes, so that a damaged or missing part is reported before
// anything is written. It then links each local shard to its archive
// shard's temporary name (copying it only where linking fails) while it
// puts the rows into the index through the Writer, in order: duplicate
// paths, a path both a file and a directory, and the directories' counts
// come out as in the single run. Everything is renamed into place only
// when complete (opts.Overwrite as for WriteRows); the parts are not
// changed. It returns the RowsStats WriteRows would, but for the number
// of shards.
//
// The index is built without the Writer's filter of the paths added
// (which costs a lookup a row): a repeated path or a path both a file and
// a directory is then found at Close, where the index is complete. Only
// then is the merge run again with the filter, which stops at the row
// and names its part.
func MergeParts(ctx context.Context, parts []string, out string, opts RowsOptions) (*RowsStats, *MergeStats, error) {
	st, ms, err := mergeArchive(ctx, parts, out, opts, false)
	if err != nil && ctx.Err() == nil && (errors.Is(err, ErrDuplicate) || errors.Is(err, ErrDuplicatePath) || errors.Is(err, ErrConflict)) {
		return mergeArchive(ctx, parts, out, opts, true)
	}
	return st, ms, err
}

// mergeRun, where a test sets it, is told of each run of mergeArchive.
var mergeRun func(filtered bool)

// mergeArchive is MergeParts, with the Writer's filter of paths or without.
func mergeArchive(ctx context.Context, parts []string, out string, opts RowsOptions, filtered bool) (*RowsStats, *MergeStats, error) {
	if mergeRun != nil {
		mergeRun(filtered)
	}
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
	defer plan.close()
	w, err := CreateContext(ctx, out, WriterOptions{ShardSizeLimit: opts.ShardSize, Overwrite: opts.Overwrite, Memory: opts.Memory})
	if err != nil {
		return nil, nil, err
	}
	if !filtered {
		w.dropFilter()
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
	size   int64 // the shard size limit the parts must have been written with
	limit  int64 // and as a bound
	parts  []*mergePart
	shards []outShard
}

type mergePart struct {
	dir    string
	rows   string   // its rows file
	shards []string // its local shard files, as found on disk
	sizes  []int64  // and their sizes
	first  int      // the archive's number of its local shard 0
	f      *os.File // the rows file, open while replay reads it
	pr     *partReader
}

// outShard is one shard of the archive: a part's local shard whole.
type outShard struct {
	part, shard int
	size        int64
}

// openPart opens a part's rows file for reading.
func (mp *mergePart) open() (*os.File, *partReader, error) {
	f, err := openRows(mp.rows)
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

// openRows opens a part's rows file; tests count the opens.
var openRows = os.Open

// planMerge cuts the archive's shards from the parts' local shards as
// they are on disk, found by name, and checks that each part has a rows
// file. It does not read the rows: replay reads each rows file once, and
// at its end checks that the summary lists exactly the local shards found
// here, with their sizes. The part is then known sound only once
// replayed; nothing appears at the output before every part is.
func planMerge(ctx context.Context, dirs []string, shardSize int64) (*mergePlan, error) {
	plan := &mergePlan{size: shardSize, limit: shardSize}
	if plan.limit == 0 {
		plan.limit = UnlimitedShardSize
	}
	for _, dir := range dirs {
		if err := ctx.Err(); err != nil {
			plan.close()
			return nil, err
		}
		mp := &mergePart{dir: dir, rows: filepath.Join(dir, partRowsName), first: len(plan.shards)}
		plan.parts = append(plan.parts, mp)
		// Opened in replay, one part at a time: a merge of many parts
		// does not hold a file open for each.
		if _, err := os.Stat(mp.rows); err != nil {
			plan.close()
			if errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%s: no rows file (not a part, or an incomplete one): %w", mp.dir, ErrPart)
			}
			return nil, fmt.Errorf("%w (%w)", err, ErrPart)
		}
		for j := 0; ; j++ {
			name := filepath.Join(dir, partShardName(j))
			st, err := os.Stat(name)
			if errors.Is(err, fs.ErrNotExist) {
				break
			}
			switch {
			case err != nil:
				plan.close()
				return nil, fmt.Errorf("%s: local shard %d: %w (%w)", dir, j, err, ErrPart)
			case !st.Mode().IsRegular():
				plan.close()
				return nil, fmt.Errorf("%s: not a regular file: %w", name, ErrPart)
			case st.Size() > plan.limit:
				plan.close()
				return nil, fmt.Errorf("%s: %d bytes, past the shard size limit %d: %w", name, st.Size(), plan.limit, ErrPart)
			case j >= maxPartShards:
				plan.close()
				return nil, fmt.Errorf("%s: more than %d local shards: %w", dir, maxPartShards, ErrPart)
			}
			mp.shards = append(mp.shards, name)
			mp.sizes = append(mp.sizes, st.Size())
			plan.shards = append(plan.shards, outShard{part: len(plan.parts) - 1, shard: j, size: st.Size()})
		}
	}
	return plan, nil
}

// close closes the rows files planMerge opened.
func (plan *mergePlan) close() {
	for _, mp := range plan.parts {
		if mp.f != nil {
			mp.f.Close()
			mp.f = nil
		}
	}
}

// checkShards compares the local shards a part's rows file lists (its
// summary, once read) with those planMerge found.
func (mp *mergePart) checkShards(shardSize int64) error {
	sum := mp.pr.sum
	if sum.shardSize != shardSize {
		return fmt.Errorf("%s: written with shard size %d, merged with %d: %w", mp.rows, sum.shardSize, shardSize, ErrPart)
	}
	for j, want := range sum.shards {
		if j >= len(mp.shards) {
			_, err := os.Stat(filepath.Join(mp.dir, partShardName(j)))
			return fmt.Errorf("%s: local shard %d: %w (%w)", mp.dir, j, cmpOr(err, fs.ErrNotExist), ErrPart)
		}
		if got := mp.sizes[j]; got != want {
			return fmt.Errorf("%s: %d bytes, the rows file says %d (truncated or changed): %w", mp.shards[j], got, want, ErrPart)
		}
	}
	if n := len(sum.shards); n < len(mp.shards) {
		return fmt.Errorf("%s: %s, which the rows file does not list: %w", mp.dir, partShardName(n), ErrPart)
	}
	return nil
}

// cmpOr is err, or alt where err is nil.
func cmpOr(err, alt error) error {
	if err != nil {
		return err
	}
	return alt
}

// replay puts every part's rows into the index, in order, as WriteRows'
// sink does with the source's rows: the Writer decides duplicates,
// conflicts and the directories' counts.
func (plan *mergePlan) replay(ctx context.Context, w *Writer, out string, ms *MergeStats) (*RowsStats, error) {
	defer plan.close()
	stats := &RowsStats{Output: out, Skipped: map[string]int64{}}
	for _, mp := range plan.parts {
		var err error
		if mp.f, mp.pr, err = mp.open(); err != nil {
			return nil, err
		}
		if err := plan.replayPart(ctx, w, mp, stats); err != nil {
			return nil, err
		}
		mp.f.Close()
		mp.f = nil
		for k, n := range mp.pr.sum.skipped {
			stats.Skipped[k] += n
		}
		ms.Rows += mp.pr.sum.records
	}
	return stats, nil
}

func (plan *mergePlan) replayPart(ctx context.Context, w *Writer, mp *mergePart, stats *RowsStats) error {
	pr := mp.pr
	for n := int64(0); ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		at := pr.off
		r, ls, off, err := pr.next()
		if err == io.EOF {
			return mp.checkShards(plan.size)
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
		if r.size > plan.limit {
			return pr.errAt(at, "file %s of %d bytes, past the shard size limit %d", human.Name(r.path), r.size, plan.limit)
		}
		// The summary, at the end, says whether the local shards are
		// those found; a file must lie in one of them before that.
		switch {
		case ls >= len(mp.shards):
			_, err := os.Stat(filepath.Join(mp.dir, partShardName(ls)))
			return fmt.Errorf("%s: local shard %d: %w (%w)", mp.dir, ls, cmpOr(err, fs.ErrNotExist), ErrPart)
		case off+r.size > mp.sizes[ls]:
			return fmt.Errorf("%s: %d bytes, the rows file says %d or more (truncated or changed): %w", mp.shards[ls], mp.sizes[ls], off+r.size, ErrPart)
		}
		err = w.AddExternal(File{Path: r.path, Shard: mp.first + ls, Offset: off, Size: r.size, CRC32C: r.crc, HasCRC: true,
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

// buildShard makes shard i at tmp: a hard link to its part's local
// shard, or a copy where the file system cannot link it there.
func (plan *mergePlan) buildShard(ctx context.Context, i int, tmp string) (linked bool, err error) {
	sh := plan.shards[i]
	mp := plan.parts[sh.part]
	if err := os.Link(mp.shards[sh.shard], tmp); err == nil {
		return true, nil
	}
	// Another file system, or one without hard links: copied.
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return false, err
	}
	err = plan.copyShard(ctx, f, sh)
	if err == nil && fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return false, err
}

// copyShard copies a part's local shard whole into dst.
func (plan *mergePlan) copyShard(ctx context.Context, dst *os.File, sh outShard) error {
	mp := plan.parts[sh.part]
	src, err := os.Open(mp.shards[sh.shard])
	if err != nil {
		return err
	}
	defer src.Close()
	// In pieces, each handed to writeback once copied, so that the disk
	// works while the rest is copied and the final fsync has little left
	// to wait for (as the Writer does).
	for at := int64(0); at < sh.size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := min(sh.size-at, writebackChunk)
		if _, err := filecopy.RangeContext(ctx, dst, at, src, at, k); err != nil {
			return fmt.Errorf("%s: %w", mp.dir, err)
		}
		if fsync {
			startWriteback(dst, at, k)
		}
		at += k
	}
	return nil
}
