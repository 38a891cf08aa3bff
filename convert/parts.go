package convert

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/internal/sharedrec"
	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/spool"
)

// A partitioned conversion: task K of N converts its share of the
// source's shards (ConvertPart) into a part, a directory, and the merge
// (MergeConverted) joins the parts into what Convert writes from the
// whole source. The target format does both halves (registry's CreatePart
// and MergeParts); tar shards into TBL keep their converter's own.

// ErrNoPartition: a conversion that does not run as tasks of a
// partitioned run.
var ErrNoPartition = errors.New("this conversion does not run as a partitioned run")

// ConvertInputs are the files a conversion reads, as a partitioned run's
// manifests record them: tar shards one by one, else the paths given.
func ConvertInputs(srcs []string, o ConvertOptions) ([]string, error) {
	f, err := FindShards(srcs, o)
	switch {
	case err != nil:
		return nil, err
	case f == nil:
		return srcs, nil
	}
	return f.Shards, nil
}

// FindShards finds the tar shards srcs name, with what os.Stat said of
// each given as a file (a partitioned run's manifest need not stat each
// again: partition.StatInputsKnown), for ConvertOptions.Found; nil where
// the source is not tar shards.
func FindShards(srcs []string, o ConvertOptions) (*FoundShards, error) {
	return FindShardsKnown(srcs, nil, o)
}

// FindShardsKnown is FindShards for sources the caller has stat'ed
// (known[i], where set, is os.Stat of srcs[i]): of thousands of shards
// given one by one, none is stat'ed again.
func FindShardsKnown(srcs []string, known []fs.FileInfo, o ConvertOptions) (*FoundShards, error) {
	from, _, err := Formats(srcs, "", o.From, o.To)
	if err != nil || from != "tar" {
		return nil, err
	}
	o.From = from
	shards, infos, src, err := o.tarShardsKnown(srcs, known)
	if err != nil {
		return nil, err
	}
	return &FoundShards{Srcs: slices.Clone(srcs), Fold: src.Fold, Shards: shards, Infos: infos}, nil
}

// partitionable says why the conversion cannot run as tasks, or nil.
func partitionable(srcs []string, dst string, o ConvertOptions) error {
	var wrap, reuseTars bool
	switch o.From {
	case "tar":
		// The tar options are read by the task, not the merge: a merge
		// refuses those of the wrong type all the same.
		if _, err := o.tarSource(); err != nil {
			return err
		}
		if o.To == "barecat" {
			b, err := o.barecatTarget()
			if err != nil {
				return err
			}
			wrap = b.Wrap || b.OnDuplicate != ""
		}
	case "barecat":
		b, err := o.barecatSource()
		if err != nil {
			return err
		}
		reuseTars = b.ReuseTars
	}
	switch {
	case dst == Stream:
		return fmt.Errorf("a tar stream on standard output: %w", ErrNoPartition)
	case o.From == "tar" && o.To == "tbl":
		return nil
	case wrap:
		return fmt.Errorf("tar shards into Barecat with --wrap or --on-duplicate: %w", ErrNoPartition)
	case o.From == "tar" && o.To == "tar":
		if o.ShardSize <= 0 {
			return fmt.Errorf("compressed shards decompressed as they are: %w; give --shard-size to write them anew", ErrNoPartition)
		}
	case reuseTars:
		return fmt.Errorf("--reuse-tars: %w (it indexes the tars: index them as a partitioned run)", ErrNoPartition)
	case o.From == "scdl" && o.To == "tar", o.To == "scdl" && o.From == "tar":
		return fmt.Errorf("SCDL to and from its two folds: %w", ErrNoPartition)
	}
	tgt := registry.Lookup(o.To)
	if tgt == nil || tgt.CreatePart == nil || tgt.MergeParts == nil {
		return fmt.Errorf("into %s: %w", o.To, ErrNoPartition)
	}
	return nil
}

// ConvertPart converts task t's share of the source's shards into the
// part directory dir, and says which shards [lo, hi) it took.
func ConvertPart(ctx context.Context, srcs []string, dst string, o ConvertOptions, t partition.Task, dir string) (lo, hi int, st any, err error) {
	if o.From, o.To, err = Formats(srcs, dst, o.From, o.To); err != nil {
		return 0, 0, nil, err
	}
	if err := partitionable(srcs, dst, o); err != nil {
		return 0, 0, nil, err
	}
	if o.From == "tar" && o.To == "tbl" {
		opts, err := o.tblTarget()
		if err != nil {
			return 0, 0, nil, err
		}
		shards, infos, src, err := o.tarShardsInfo(srcs)
		if err != nil {
			return 0, 0, nil, err
		}
		lo, hi = partition.Range(shardSizes(fold.NewTarShards(shards, src.Scan), infos), t)
		opts.Workers, opts.Scan, opts.Progress = o.Workers, src.Scan, o.Progress
		opts.Spool = o.spool(dst)
		defer opts.Spool.Close()
		// Plain local shards: every task counts the whole dataset's
		// headers, as one run does, and writes its samples where the
		// finished file has them, into one data file the run's tasks
		// share beside the output, so that the merge copies no sample.
		// Remote or compressed shards would be fetched or decompressed by
		// every task for that count: there a task writes a part of its
		// own shards, which the merge copies.
		inPlace := tbl.CanWriteInPlace(tbl.RowsOptions{LZ4: opts.LZ4}) && plainLocalRun(shards, partition.PartsDir(dst), t.Run)
		newSource, ro := tblSetup(func(bool) (dataset.PayloadSource, error) {
			own := shards[lo:hi]
			if inPlace {
				own = shards
			}
			src := fold.NewTarShards(own, opts.Scan)
			if !inPlace { // plain local shards need no copies: opened as they are
				src.Spool = opts.Spool
			}
			src.BatchBytes = 2 << 20
			return src, nil
		}, opts)
		ro.Run = t.Run
		var st *tbl.PartStats
		if inPlace {
			shared := partition.PartsDir(dst)
			if err := os.MkdirAll(shared, 0o755); err != nil {
				return 0, 0, nil, err
			}
			st, err = tbl.WriteRange(ctx, newSource, lo, hi, dir, shared, ro)
		} else {
			st, err = tbl.WritePart(ctx, newSource, dir, ro)
		}
		if errors.Is(err, tbl.ErrHardlinkTarget) {
			// One run finds a link's target in any earlier shard.
			err = fmt.Errorf("%w (a task sees its own %s only: convert in one run): %w", err, partition.ShardRange(lo, hi), ErrNoPartition)
		}
		return lo, hi, st, err
	}
	d, err := o.openSource(srcs, filepath.Dir(filepath.Clean(dst)))
	if err != nil {
		return 0, 0, nil, err
	}
	defer d.Close()
	rows, err := d.Rows(true)
	if err != nil {
		return 0, 0, nil, err
	}
	lo, hi = partition.Range(dataset.ShardSizes(rows), t)
	registry.CloseSource(rows)
	format, err := o.targetOptions()
	if err != nil {
		return 0, 0, nil, err
	}
	in := sliced{named{keepNames(d, o.To), strings.Join(srcs, " ")}, lo, hi}
	st, err = registry.Lookup(o.To).CreatePart(ctx, in, dir, registry.CreateOptions{Workers: o.Workers,
		ShardSize: o.ShardSize, Progress: o.Progress, Memory: o.Memory, Format: format})
	if ps, ok := st.(*barecat.PartStats); ok && err == nil && o.From == "tar" && ps.Skipped["hardlink"] > 0 {
		// One run makes a hard link a file with its target's bytes, which
		// may lie in another task's shards.
		return 0, 0, nil, fmt.Errorf("%d hard links in %s: tar shards with hard links into Barecat: %w", ps.Skipped["hardlink"], partition.ShardRange(lo, hi), ErrNoPartition)
	}
	return lo, hi, st, err
}

// MergeConverted writes at dst, from the parts of every task of a
// partitioned conversion (their directories, in task order), what Convert
// writes from the whole source.
func MergeConverted(ctx context.Context, srcs []string, dst string, o ConvertOptions, parts []string) (*registry.Result, error) {
	var err error
	if o.From, o.To, err = Formats(srcs, dst, o.From, o.To); err != nil {
		return nil, err
	}
	if err := partitionable(srcs, dst, o); err != nil {
		return nil, err
	}
	if o.From == "tar" && o.To == "tbl" {
		if _, err := os.Lstat(dst); err == nil && !o.Overwrite {
			// As one run: an existing output is replaced only when asked.
			return nil, fmt.Errorf("%s: %w", dst, fs.ErrExist)
		}
		opts, err := o.tblTarget()
		if err != nil {
			return nil, err
		}
		_, ro := tblSetup(nil, opts)
		ro.Overwrite = o.Overwrite
		st, ms, err := tbl.MergeParts(ctx, parts, dst, ro)
		if err != nil {
			return nil, err
		}
		return tbl.MergeResult(st, ms), nil
	}
	format, err := o.targetOptions()
	if err != nil {
		return nil, err
	}
	return registry.Lookup(o.To).MergeParts(ctx, parts, dst, registry.CreateOptions{Workers: o.Workers, Overwrite: o.Overwrite,
		ShardSize: o.ShardSize, Progress: o.Progress, Memory: o.Memory, Format: format})
}

// sliced is a dataset's shards lo..hi-1: one task's share.
type sliced struct {
	registry.Dataset
	lo, hi int
}

func (s sliced) Rows(listing bool) (dataset.PayloadSource, error) {
	src, err := s.Dataset.Rows(listing)
	if err != nil {
		return nil, err
	}
	if ts, ok := src.(*fold.TarShards); ok && s.lo >= 0 && s.lo <= s.hi && s.hi <= len(ts.Paths) {
		// Tar shards: a source over the task's own, so that a spool
		// fetches those of remote shards only, not the next task's.
		part := fold.NewTarShards(ts.Paths[s.lo:s.hi], ts.Options)
		part.BatchBytes, part.ReadPayloads, part.Spool, part.Members = ts.BatchBytes, ts.ReadPayloads, ts.Spool, ts.Members
		return part, nil
	}
	part, err := dataset.Slice(src, s.lo, s.hi)
	if err != nil {
		registry.CloseSource(src)
		return nil, err
	}
	return part, nil
}

func (s sliced) Name() string {
	if n, ok := s.Dataset.(interface{ Name() string }); ok {
		return n.Name()
	}
	return "rows"
}

// shardSizes are the shards' sizes, from the stats made as they were
// found where there are (infos), asked of the source otherwise.
func shardSizes(src *fold.TarShards, infos []fs.FileInfo) []int64 {
	sizes := make([]int64, src.NumShards())
	for i := range sizes {
		if i < len(infos) && infos[i] != nil {
			sizes[i] = infos[i].Size()
		} else {
			sizes[i] = src.ShardSize(i)
		}
	}
	return sizes
}

// plainLocalRun is plainLocal for a task of the run named run (""
// where unknown), whose first task to find every shard plain records it
// in dir for the others: each would otherwise open every shard of the
// run. The run's name digests its inputs' sizes and modification times.
func plainLocalRun(shards []string, dir, run string) bool {
	name := partition.SharedPrefix + "plain-" + run
	if run != "" && string(sharedrec.Get(dir, name, 1)) == "1" {
		return true
	}
	plain := plainLocal(shards)
	if plain && run != "" && os.MkdirAll(dir, 0o755) == nil {
		sharedrec.Put(dir, name, partition.SharedPrefix+"tmp-", []byte("1"))
	}
	return plain
}

// plainLocal tells whether every shard is a plain tar file on this
// machine: no URL, no compressed shard (told by its first bytes), no
// standard input, and every one readable.
func plainLocal(shards []string) bool {
	need, err := spool.Needed(shards)
	return !need && err == nil
}
