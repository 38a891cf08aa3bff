package fold

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/taridx"

	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
)

// A partitioned index run: each task indexes its range of the shards into
// a part (IndexPart), and MergeIndexParts joins the parts into the files
// one run over every shard writes. A shard's own loader indexes (DALI's,
// energon's .tar.idx, ratarmount's) depend on that shard alone: the task
// writes them in place. What spans the dataset is kept in the part: its
// part of the TARIDX (taridx.CreatePart: rows encoded, stems sorted, which
// taridx.MergeParts joins without a pass over the rows in order), the
// loaders' per-shard states (loadersFile) and the task's figures
// (tallyFile).
const (
	loadersFile = "loaders.gob"
	tallyFile   = "stats.json"
)

// ErrPart: a part's file is not what a task of this version writes (the
// TARIDX part's errors are the same error).
var ErrPart = taridx.ErrPart

// IndexPart indexes shards[lo:hi], one task's share of a partitioned run
// over shards, into the part directory dir: TARIDX entries (when
// withTARIDX) and what opts.Loaders need of these shards to write the
// dataset's files, while the shards' own loader indexes are written in
// place. Entries carry their fid in the whole list of shards.
func IndexPart(ctx context.Context, shards []string, lo, hi int, withTARIDX bool, dir string, opts IndexOptions) (*IndexStats, error) {
	if len(shards) > taridx.MaxShards && withTARIDX {
		return nil, fmt.Errorf("%d shards: a TARIDX fid addresses at most %d: %w", len(shards), taridx.MaxShards, ErrTooManyShards)
	}
	mine := shards[lo:hi]
	scan := opts.Scan
	scan.HeaderBlocks = opts.CompatGLZN
	src := NewTarShards(mine, scan)
	var sink dataset.Sink = noSink{}
	var tx *taridxSink
	if withTARIDX {
		w, err := taridx.CreatePart(dir, opts.writerOptions())
		if err != nil {
			return nil, err
		}
		defer w.Abort()
		tx = &taridxSink{w: w, fidBase: lo, rules: indexRules{compat: opts.CompatGLZN, stem: opts.Stem}, shardNames: mine}
		sink = tx
	}
	var files *safefile.Group
	if opts.Loaders != nil {
		opts.Loaders.Plan(mine)
		files = loaderFiles(ctx, src, opts.Loaders)
	}
	err := dataset.Run(ctx, src, sink, dataset.Options{Workers: opts.Workers, Progress: opts.Progress})
	if err := commitLoaderFiles(files, err); err != nil {
		return nil, err
	}
	st := &IndexStats{}
	if tx != nil {
		if err := tx.w.ClosePart(); err != nil {
			return nil, err
		}
		st = tx.tally.partStats()
	}
	addScanStats(st, src)
	st.Shards = len(mine)
	if err := writeJSONFile(filepath.Join(dir, tallyFile), partTally{Index: st}); err != nil {
		return nil, err
	}
	if opts.Loaders != nil {
		if err := opts.Loaders.SavePart(filepath.Join(dir, loadersFile), mine); err != nil {
			return nil, err
		}
	}
	return st, nil
}

// MergeIndexParts writes what one run of BuildIndex over shards writes at
// out (nothing when out is ""), from the parts of its tasks (their
// directories, in task order), and restores the loaders' states of every
// shard into opts.Loaders, whose Finish the caller then calls as after a
// run over every fold.
func MergeIndexParts(ctx context.Context, shards []string, parts []string, out string, opts IndexOptions) (*IndexStats, error) {
	start := time.Now()
	st := &IndexStats{Output: out, Shards: len(shards), NotRegular: map[string]int64{}}
	if opts.Loaders != nil {
		opts.Loaders.Plan(shards)
	}
	for _, p := range parts {
		var pt partTally
		if err := readJSONFile(filepath.Join(p, tallyFile), &pt); err != nil {
			return nil, err
		}
		if pt.Index == nil {
			return nil, fmt.Errorf("%s: no figures: %w", filepath.Join(p, tallyFile), ErrPart)
		}
		st.add(pt.Index)
		if opts.Loaders != nil {
			if err := opts.Loaders.LoadPart(filepath.Join(p, loadersFile)); err != nil {
				return nil, err
			}
		}
	}
	if out != "" {
		in := make([]taridx.PartInput, len(parts))
		for i, p := range parts {
			in[i] = taridx.PartInput{Dir: p}
		}
		w, err := taridx.MergeParts(ctx, out, in, taridx.MergeOptions{WriterOptions: opts.writerOptions(), Shards: len(shards), Workers: opts.Workers})
		if err != nil {
			return nil, err
		}
		ws := (&indexTally{}).stats(out, w)
		st.Rows, st.Stems, st.Exts, st.Crash, st.Contiguous = ws.Rows, ws.Stems, ws.Exts, ws.Crash, ws.Contiguous
		if err := closeWithManifest(w, out, shards, opts.ShardSizes); err != nil {
			return nil, err
		}
	}
	st.timed(start)
	return st, nil
}

// partTally is a part's figures (the loaders keep theirs in their own
// file, loadersFile).
type partTally struct {
	Index *IndexStats `json:"index"`
}

// partStats are the tally's figures, as a part records them.
func (t *indexTally) partStats() *IndexStats {
	return &IndexStats{Bytes: t.bytes, NotRegular: t.notRegular, NoExt: t.noExt, SpaceInExt: t.spaceExt,
		SkippedNames: t.skippedNames, HardlinkNames: t.hardlinkNames}
}

// add sums a part's figures into st, keeping the first few names of all,
// as one run keeps them.
func (st *IndexStats) add(p *IndexStats) {
	st.Members += p.Members
	st.Sparse += p.Sparse
	st.Reads += p.Reads
	st.ReadBytes += p.ReadBytes
	st.Bytes += p.Bytes
	st.NoExt += p.NoExt
	st.SpaceInExt += p.SpaceInExt
	for k, n := range p.NotRegular {
		st.NotRegular[k] += n
	}
	st.SkippedNames = firstNames(st.SkippedNames, p.SkippedNames)
	st.HardlinkNames = firstNames(st.HardlinkNames, p.HardlinkNames)
	st.SparseNames = firstNames(st.SparseNames, p.SparseNames)
}

func firstNames(have, more []string) []string {
	for _, n := range more {
		if len(have) >= maxReportedNames {
			break
		}
		have = append(have, n)
	}
	return have
}

// addScanStats adds what the scan of src counted to st.
func addScanStats(st *IndexStats, src *TarShards) {
	for _, s := range src.Stats {
		st.Members += s.Members
		st.Sparse += s.Sparse
		st.Reads += s.Reads
		st.ReadBytes += s.ReadBytes
		st.SparseNames = firstNames(st.SparseNames, s.SparseNames)
	}
}

func writeJSONFile(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func readJSONFile(path string, v any) error {
	b, err := pathguard.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w: %w", path, ErrPart, err)
	}
	return nil
}
