package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/loaders"
	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/remote"
)

// indexPartOptions are the index options a task records in its part's
// manifest: those that shape the outputs (not --workers or
// --read-strategy), so that merge rebuilds exactly the run's.
type indexPartOptions struct {
	Compat      string   `json:"compat"`
	Stem        string   `json:"stem"`
	Contiguous  bool     `json:"contiguous"`
	Formats     []string `json:"formats"` // taridx and the loaders, in a fixed order
	OutDir      string   `json:"out_dir"` // absolute, or ""
	WidsMD5     bool     `json:"wids_md5"`
	IgnoreZeros bool     `json:"ignore_zeros"`
}

func newIndexPartOptions(fl indexFlags, set *loaders.Set, withTARIDX bool) (indexPartOptions, error) {
	o := indexPartOptions{Compat: fl.compat, Stem: fl.stem, Contiguous: fl.contiguous,
		WidsMD5: fl.widsMD5, IgnoreZeros: fl.ignoreZeros, Formats: []string{}}
	if withTARIDX {
		o.Formats = append(o.Formats, taridx.FormatName)
	}
	if set != nil {
		o.Formats = append(o.Formats, set.Names()...)
	}
	if fl.outDir != "" {
		abs, err := filepath.Abs(fl.outDir)
		if err != nil {
			return o, err
		}
		o.OutDir = abs
	}
	return o, nil
}

// flags are the index flags that give these options back.
func (o indexPartOptions) flags(workers int) indexFlags {
	return indexFlags{compat: o.Compat, stem: o.Stem, contiguous: o.Contiguous, formats: strings.Join(o.Formats, ","),
		outDir: o.OutDir, widsMD5: o.WidsMD5, ignoreZeros: o.IgnoreZeros, workers: workers, strategy: "auto"}
}

// indexTask indexes this task's share of job's shards into its part of
// the run named by anchor.
func (e *env) indexTask(ctx context.Context, fl indexFlags, opts fold.IndexOptions, set *loaders.Set, withTARIDX bool, job indexJob, anchor string,
	t partition.Task, inputs []partition.Input, lo, hi int) error {
	po, err := newIndexPartOptions(fl, set, withTARIDX)
	if err != nil {
		return err
	}
	if len(po.Formats) == 0 {
		return usagef("--format: nothing to index")
	}
	// Absolute paths: the merge restores the loaders' states of shards
	// by the paths the manifest records.
	// A URL's input is recorded without its user info: the task reads it
	// by the URL given.
	shards := make([]string, len(inputs))
	for i, in := range inputs {
		shards[i] = in.Path
		if remote.IsURL(job.shards[i]) {
			shards[i] = job.shards[i]
		}
	}
	job.shards = shards
	return e.runTask("index", anchor, t, inputs, po, func(dir string, m *partition.Manifest) (any, int, int, error) {
		bar := e.newShardProgress(job.fold, job.shards[lo:hi], inputSizes(inputs[lo:hi]), true)
		opts.Progress = func(p dataset.Progress) { bar.update(job.fold, p) }
		st, err := fold.IndexPart(ctx, job.shards, lo, hi, withTARIDX, dir, opts)
		bar.done(err)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("indexing fold %s: %w", job.fold, err)
		}
		if set != nil {
			// The shards' own loader indexes, written in place: merge
			// checks they are still there as the task wrote them.
			for _, f := range set.ShardFiles(job.shards[lo:hi]) {
				if fi, err := os.Stat(f); err == nil {
					m.Written = append(m.Written, partition.File{Name: f, Size: fi.Size()})
				}
			}
		}
		return st, lo, hi, nil
	})
}

// mergeIndex writes the index (and the loaders' files that span the
// dataset) of a partitioned index run from its parts, and returns the
// files written.
func mergeIndex(ctx context.Context, e *env, fl mergeFlags, set *partition.Set) ([]string, error) {
	m := set.Parts[0].Manifest
	var po indexPartOptions
	if err := json.Unmarshal(m.Options, &po); err != nil {
		return nil, fmt.Errorf("%s: the options of its index run: %w: %w", set.Dir, partition.ErrParts, err)
	}
	flags := po.flags(fl.workers)
	flags.memory = e.memory
	opts, loaderSet, withTARIDX, err := indexSetup(flags)
	if err != nil {
		return nil, fmt.Errorf("%s: the options of its index run: %w", set.Dir, err)
	}
	inputs, err := set.Parts[0].ReadInputs()
	if err != nil {
		return nil, err
	}
	shards := make([]string, len(inputs))
	// The sizes the tasks recorded, which the merge found unchanged: the
	// index's manifest takes them rather than a stat of every shard.
	opts.ShardSizes = make([]int64, len(inputs))
	for i, in := range inputs {
		shards[i], opts.ShardSizes[i] = in.Path, in.Size
	}
	dirs := make([]string, len(set.Parts))
	for i, p := range set.Parts {
		dirs[i] = p.Dir
	}
	out := ""
	if withTARIDX {
		out = m.Output
	}
	st, err := fold.MergeIndexParts(ctx, shards, dirs, out, opts)
	if err != nil {
		return nil, err
	}
	res := newIndexResult(strings.TrimSuffix(filepath.Base(m.Output), ".taridx"), st)
	e.reportIndex(res)
	var outputs []string
	if out != "" {
		outputs = append(outputs, out, fold.ManifestPath(out))
	}
	var loaderStats *loaders.Stats
	if loaderSet != nil {
		loaderStats, err = loaderSet.Finish(ctx)
		e.reportLoaders(loaderStats)
		if err != nil {
			return nil, err
		}
		outs, _ := loaderSet.Outputs()
		outputs = append(outputs, outs...)
	}
	e.infof("merged %d parts of %s\n", set.Tasks, m.Output)
	if fl.json {
		res := map[string]any{"folds": []indexResult{res}, "tasks": set.Tasks}
		if loaderStats != nil {
			res["loaders"] = loaderStats
		}
		return outputs, e.setResult(res)
	}
	return outputs, nil
}
