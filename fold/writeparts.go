package fold

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/safefile"
)

// A fold written by the tasks of a partitioned run: each task writes its
// rows as final shards, rolled over at the fold's shard size and member
// count as one run rolls over, under names that sort in task order
// (partShards), and its index as a part (taridx.CreatePart), whose fids
// count its own shards from 0. The merge (StageParts) links the shards
// into the fold under its names, numbered across the tasks, and writes
// the index from the parts (taridx.MergeParts), the fids offset by the
// shards of the tasks before: no payload byte is read or written again.
//
// The merged fold holds the members one run writes, with the same bytes,
// names and order, and its index finds them; only where shards end may
// differ from one run's (a task's last shard may be short).
const (
	partShards = "shard" // a part's shards: shard_0000.tar, ...
	writeTally = "write.json"
)

// WritePart writes rows, one task's share of a partitioned run, as the
// part in dir that StageParts joins with the other tasks' into a fold:
// its shards, under opts.ShardSize and opts.MaxMembers, and the part of
// the fold's index. (The fold's name and naming are the merge's.)
func WritePart(ctx context.Context, src dataset.PayloadSource, dir string, opts WriteOptions) (*WriteStats, error) {
	w, err := tarfile.Create(tarfile.WriterOptions{Dir: dir, Fold: partShards, ShardSize: opts.ShardSize, MaxMembers: opts.MaxMembers})
	if err != nil {
		return nil, err
	}
	defer w.Abort()
	x, err := taridx.CreatePart(dir, opts.Index.writerOptions())
	if err != nil {
		return nil, err
	}
	defer x.Abort()
	sink := &tarFoldSink{src: src, w: w, add: x.Add, rules: indexRules{stem: opts.Index.Stem},
		stats: &WriteStats{Skipped: map[string]int64{}}}
	if err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress}); err != nil {
		return nil, err
	}
	if err := x.ClosePart(); err != nil {
		return nil, err
	}
	st := sink.stats
	st.Index = sink.tally.partStats()
	rec := writePart{Stats: st}
	if st.Members > 0 { // else no shard: a task of no rows adds none to the fold
		names, err := w.Close()
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			fi, err := os.Stat(n)
			if err != nil {
				return nil, err
			}
			rec.Shards = append(rec.Shards, partShard{Name: filepath.Base(n), Size: fi.Size()})
		}
	}
	return st, writeJSONFile(filepath.Join(dir, writeTally), rec)
}

// writePart is what a part of a written fold records of itself: the
// task's figures, and its shards in order.
type writePart struct {
	Stats  *WriteStats `json:"stats"`
	Shards []partShard `json:"shards"`
}

type partShard struct {
	Name string `json:"name"`
	Size int64  `json:"size"`
}

// StageParts writes, from the parts of every task (their directories, in
// task order), the fold that Stage writes from all the rows, under
// temporary names: the tasks' shards, linked under the fold's names, and
// the index, merged from the tasks' parts of it.
func StageParts(ctx context.Context, parts []string, opts WriteOptions) (*Pending, *MergeStats, error) {
	naming, err := WriteNaming(opts)
	if err != nil {
		return nil, nil, err
	}
	opts.Fold = naming.Fold
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	stats := &WriteStats{Skipped: map[string]int64{}}
	tally := &IndexStats{NotRegular: map[string]int64{}}
	var src []string // the tasks' shards, in order
	in := make([]taridx.PartInput, len(parts))
	for i, p := range parts {
		var wp writePart
		path := filepath.Join(p, writeTally)
		if err := readJSONFile(path, &wp); err != nil {
			return nil, nil, err
		}
		if wp.Stats == nil || wp.Stats.Index == nil {
			return nil, nil, fmt.Errorf("%s: no figures: %w", path, ErrPart)
		}
		in[i] = taridx.PartInput{Dir: p, FidBase: len(src)}
		for _, s := range wp.Shards {
			shard := filepath.Join(p, s.Name)
			if s.Name != filepath.Base(s.Name) || !strings.HasSuffix(s.Name, ".tar") || strings.HasPrefix(s.Name, ".") {
				return nil, nil, fmt.Errorf("%s: a shard named %q: %w", path, s.Name, ErrPart)
			}
			if fi, err := os.Lstat(shard); err != nil {
				return nil, nil, err
			} else if !fi.Mode().IsRegular() || fi.Size() != s.Size {
				return nil, nil, fmt.Errorf("%s: %d bytes, not the %d-byte shard the task wrote: %w", shard, fi.Size(), s.Size, ErrPart)
			}
			src = append(src, shard)
		}
		ps := wp.Stats
		stats.Members += ps.Members
		stats.Bytes += ps.Bytes
		for k, n := range ps.Skipped {
			stats.Skipped[k] += n
		}
		tally.add(ps.Index)
	}
	if len(src) > taridx.MaxShards {
		return nil, nil, fmt.Errorf("%d shards: a TARIDX fid addresses at most %d (raise --shard-size): %w", len(src), taridx.MaxShards, ErrTooManyShards)
	}
	idx := filepath.Join(opts.Dir, opts.Fold+".taridx")
	x, err := taridx.MergeParts(ctx, idx, in, taridx.MergeOptions{WriterOptions: opts.Index.writerOptions(), Shards: max(len(src), 1), Workers: opts.Workers})
	if err != nil {
		return nil, nil, fmt.Errorf("indexing the new fold: %w", err)
	}
	ms := &MergeStats{Parts: len(parts)}
	var files shardFiles
	var names []string
	if len(src) == 0 {
		// No rows at all: one empty archive, as one run writes.
		w, err := tarfile.Create(tarfile.WriterOptions{Dir: opts.Dir, Fold: opts.Fold, Pattern: opts.Name, Replace: opts.Replace})
		if err == nil {
			names, err = w.Finish()
		}
		if err != nil {
			x.Abort()
			return nil, nil, err
		}
		files = w
	} else {
		l := &linkedShards{replace: opts.Replace}
		for i, s := range src {
			name := tarfile.ShardName(opts.Fold, i, len(src), minShardDigits)
			if opts.Name != "" {
				name = tarfile.PatternName(opts.Name, i)
			}
			names = append(names, filepath.Join(opts.Dir, name))
			if err := ctx.Err(); err != nil {
				l.Abort()
				x.Abort()
				return nil, nil, err
			}
			if err := l.stage(s, names[i], ms); err != nil {
				l.Abort()
				x.Abort()
				return nil, nil, err
			}
		}
		files = l
	}
	ist := (&indexTally{}).stats(idx, x)
	ist.Shards, ist.Members = len(names), stats.Members
	ist.Bytes, ist.NotRegular, ist.NoExt, ist.SpaceInExt = tally.Bytes, tally.NotRegular, tally.NoExt, tally.SpaceInExt
	ist.SkippedNames, ist.HardlinkNames = tally.SkippedNames, tally.HardlinkNames
	stats.Index = ist
	pending := &Pending{dir: opts.Dir, fold: opts.Fold, replace: opts.Replace, byNames: !naming.glzn, w: files, x: x, names: names, stats: stats}
	if _, err := checkStale(opts.Dir, opts.Fold, names, pending.byNames, opts.Replace); err != nil {
		pending.Abort()
		return nil, nil, err
	}
	return pending, ms, nil
}

// MergeParts is StageParts, then Commit.
func MergeParts(ctx context.Context, parts []string, opts WriteOptions) (*WriteStats, *MergeStats, error) {
	p, ms, err := StageParts(ctx, parts, opts)
	if err != nil {
		return nil, nil, err
	}
	st, err := p.Commit()
	return st, ms, err
}

// MergeStats describes a merge: how many shards it linked into place, and
// how many bytes it copied (in how many ranges) where it could not link
// (the parts on another file system than the fold).
type MergeStats struct {
	Parts       int   `json:"parts"`
	Linked      int   `json:"linked_shards"`
	CopiedBytes int64 `json:"copied_bytes"`
	Ranges      int   `json:"ranges"`
}

// linkedShards are a merged fold's shards: the tasks' shards, linked under
// temporary names beside their final ones, and renamed into place by
// Commit. The parts keep their links until the merge is recorded, so a
// merge that fails leaves every part as it was.
type linkedShards struct {
	replace bool
	temps   []string
	finals  []string
	done    bool
}

// stage links the task's shard src under a temporary name of final, or,
// where the file system cannot link them, copies it (copy_file_range,
// which shares extents where the file system can).
func (l *linkedShards) stage(src, final string, ms *MergeStats) error {
	// A temporary name of this process (which a later run sweeps if
	// this one is killed), made here: safefile.Create would list the
	// directory for leftovers at every shard.
	tmp := filepath.Join(filepath.Dir(final), strings.Replace(safefile.TempName(filepath.Base(final)), "*", "link", 1))
	os.Remove(tmp)
	if err := os.Link(src, tmp); err == nil {
		ms.Linked++
	} else if err := copyPartShard(tmp, src, ms); err != nil {
		// Another file system, or one without hard links: a copy.
		os.Remove(tmp)
		return err
	}
	l.temps = append(l.temps, tmp)
	l.finals = append(l.finals, final)
	return nil
}

// copyPartShard copies a task's shard src to the new file dst
// (copy_file_range, which shares extents where the file system can).
func copyPartShard(dst, src string, ms *MergeStats) error {
	s, err := os.Open(src)
	if err != nil {
		return err
	}
	defer s.Close()
	fi, err := s.Stat()
	if err != nil {
		return err
	}
	d, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, err = filecopy.Range(d, 0, s, 0, fi.Size())
	if err == nil {
		err = d.Sync()
	}
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	ms.CopiedBytes += fi.Size()
	ms.Ranges++
	return err
}

// Commit renames the shards into place, failing where a shard of the same
// name appeared meanwhile unless replacing.
func (l *linkedShards) Commit() ([]string, error) {
	if l.done {
		return nil, errors.New("fold: merged shards already committed or aborted")
	}
	l.done = true
	for i, tmp := range l.temps {
		var err error
		if l.replace {
			err = os.Rename(tmp, l.finals[i])
		} else {
			err = safefile.RenameNoReplace(tmp, l.finals[i])
		}
		if err != nil {
			for _, rest := range l.temps[i:] {
				os.Remove(rest)
			}
			if !l.replace {
				// The shards put in place were new names: a failed
				// merge leaves none (the parts keep theirs).
				for _, done := range l.finals[:i] {
					os.Remove(done)
				}
			}
			return nil, err
		}
	}
	if len(l.finals) > 0 {
		safefile.SyncDir(filepath.Dir(l.finals[0]))
	}
	return l.finals, nil
}

// Abort removes the links made so far (the parts keep theirs).
func (l *linkedShards) Abort() {
	if l.done {
		return
	}
	l.done = true
	for _, tmp := range l.temps {
		os.Remove(tmp)
	}
}

// minShardDigits is the tar writer's default least number of digits in
// shard numbers, which Stage writes with.
const minShardDigits = 4
