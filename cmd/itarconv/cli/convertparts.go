package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/remote"
)

// convertPartOptions are what a task of a partitioned conversion records
// in its part's manifest: the sources and target as given (absolute) and
// the flags that shape the output (not --workers), so that merge writes
// exactly the run's.
type convertPartOptions struct {
	Srcs []string `json:"sources,omitempty"`
	// SrcsAreInputs: the sources are the run's inputs, in order, which
	// the parts record once for the run (Srcs is then left out: of
	// thousands of shards, a copy in every manifest was most of what a
	// merge read).
	SrcsAreInputs bool   `json:"sources_are_inputs,omitempty"`
	Dst           string `json:"target"`
	From          string `json:"from"`
	To            string `json:"to"`
	ShardSize     int64  `json:"shard_size"`
	Force         bool   `json:"force"`
	// Options are the formats' options (the flags they declare) by name.
	Options registry.Values `json:"options"`
}

// newConvertPartOptions records the conversion as its parts keep it: local
// sources by absolute path, URLs as remote.StoredURL writes them (never
// their user info; a signature or token in the query only with
// keepQuerySecrets).
func newConvertPartOptions(fl convertFlags, srcs []string, dst string, shardSize int64, keepQuerySecrets bool) (convertPartOptions, error) {
	o := convertPartOptions{From: fl.from, To: fl.to, ShardSize: shardSize, Force: fl.force, Options: fl.values}
	var err error
	for _, s := range srcs {
		var stored string
		if remote.IsURL(s) {
			stored, err = remote.StoredURL(s, keepQuerySecrets)
			if err != nil {
				return o, usageError{err}
			}
		} else if stored, err = filepath.Abs(s); err != nil {
			return o, err
		}
		o.Srcs = append(o.Srcs, stored)
	}
	o.Dst, err = filepath.Abs(dst)
	return o, err
}

// sameSources tells whether the sources are the inputs, in order.
func sameSources(srcs []string, inputs []partition.Input) bool {
	return slices.EqualFunc(srcs, inputs, func(s string, in partition.Input) bool { return s == in.Path })
}

func (o convertPartOptions) flags(workers int) convertFlags {
	return convertFlags{from: o.From, to: o.To, force: o.Force, values: o.Options, workers: workers}
}

// convertTask converts this task's share of the source into its part of
// the run whose output is dst.
func (e *env) convertTask(ctx context.Context, fl convertFlags, srcs []string, stats []fs.FileInfo, dst string, shardSize int64, t partition.Task) error {
	po, err := newConvertPartOptions(fl, srcs, dst, shardSize, e.storeSignedURLs)
	if err != nil {
		return err
	}
	o, err := convertOptions(fl, shardSize)
	o.Memory = e.memory
	if err != nil {
		return err
	}
	// The shards are read as given (a URL's user info authenticates it);
	// the part records them as po has them.
	read := make([]string, len(srcs))
	for i, s := range srcs {
		read[i] = s
		if !remote.IsURL(s) {
			read[i] = po.Srcs[i]
		}
	}
	paths, infos := read, []fs.FileInfo(nil)
	found, err := convert.FindShardsKnown(read, stats, o)
	if err != nil {
		return err
	}
	if found != nil {
		// Found once: the manifest and the task's share take them.
		paths, infos, o.Found = found.Shards, found.Infos, found
	}
	inputs, err := partition.StatInputsKnown(ctx, paths, infos)
	if err != nil {
		return err
	}
	if sameSources(po.Srcs, inputs) {
		po.Srcs, po.SrcsAreInputs = nil, true
	}
	return e.runTask("convert", dst, t, inputs, po, func(dir string, m *partition.Manifest) (any, int, int, error) {
		t.Run = m.Run
		bar := e.newProgress(fl.to, 0)
		o.Progress = func(p dataset.Progress) { bar.update(fl.to, p) }
		lo, hi, st, err := convert.ConvertPart(ctx, read, po.Dst, o, t, dir)
		bar.done(err)
		return st, lo, hi, err
	})
}

// mergeConvert writes the output of a partitioned conversion from its
// parts, and returns it, with what takes it away again (nil where an
// output was there before the merge: it is not the merge's to remove).
func mergeConvert(ctx context.Context, e *env, fl mergeFlags, set *partition.Set) ([]string, func(), error) {
	m := set.Parts[0].Manifest
	var po convertPartOptions
	if err := json.Unmarshal(m.Options, &po); err != nil {
		return nil, nil, fmt.Errorf("%s: the options of its conversion: %w: %w", set.Dir, partition.ErrParts, err)
	}
	if po.SrcsAreInputs {
		inputs, err := set.Parts[0].ReadInputs()
		if err != nil {
			return nil, nil, err
		}
		for _, in := range inputs {
			po.Srcs = append(po.Srcs, in.Path)
		}
	}
	o, err := convertOptions(po.flags(fl.workers), po.ShardSize)
	o.Memory = e.memory
	if err != nil {
		return nil, nil, err
	}
	dirs := make([]string, len(set.Parts))
	for i, p := range set.Parts {
		dirs[i] = p.Dir
	}
	undo := newOutputsUndo(po)
	res, err := convert.MergeConverted(ctx, po.Srcs, po.Dst, o, dirs)
	if err != nil {
		return nil, nil, err
	}
	for _, w := range res.Warnings {
		e.warnf("%s\n", w)
	}
	e.infof("%s\n", res.Summary)
	if fl.json {
		return []string{po.Dst}, undo, e.setResult(res.Stats)
	}
	return []string{po.Dst}, undo, nil
}

// newOutputsUndo returns what removes the conversion's outputs, written by
// a merge that then finds a part replaced (a task run again meanwhile):
// they are not the run's, and the merge to come must find no output in
// its way. Nil where the output was there before the merge (--force
// replaced it: its old content is gone either way, but a directory may
// hold other files), or where its files cannot be told.
func newOutputsUndo(po convertPartOptions) func() {
	from, to, err := convert.Formats(po.Srcs, po.Dst, po.From, po.To)
	if err != nil {
		return nil
	}
	fl := po.flags(1)
	fl.from, fl.to = from, to
	if o, err := targetOutputs(po.Dst, fl, po.Srcs); err != nil || len(o.Replaced) > 0 {
		return nil
	}
	if _, err := os.Lstat(po.Dst); err == nil {
		return nil
	}
	return func() {
		if o, err := targetOutputs(po.Dst, fl, po.Srcs); err == nil {
			for _, p := range o.Replaced {
				os.RemoveAll(p)
			}
		}
		os.RemoveAll(po.Dst)
	}
}
