package loaders

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/shardset"
)

// ErrNoIndex: a loader writes no index for such a shard (DALI: one
// without a regular member). The shard is reported, not an error.
var ErrNoIndex = errors.New("the loader indexes no such shard")

// ErrDataset: a loader cannot use the dataset as it is, so its
// dataset-wide index is not written (energon: a key in two places; wids: a
// shard its loader cannot read).
var ErrDataset = errors.New("the loader cannot use this dataset")

// ErrOutputClash: two shards' indexes would be written to one path (shards
// of the same name from several directories, gathered by --out-dir).
var ErrOutputClash = errors.New("two indexes would have the same path")

// A Loader is another data loader's index of tar shards, written from the
// same pass over the headers as the fold's TARIDX: a file per shard, written
// as soon as the shard is read (put in place with others: see
// ShardIndexer), and (for some loaders) files that span the whole dataset,
// written by Finish once every shard is read.
type Loader interface {
	// Name is the loader's name on the command line ("dali", "energon").
	Name() string
	// Outputs lists the files Finish and the shards' indexers will write,
	// for the given shards of the dataset, in the order they were planned.
	Outputs(shards []string) []string
	// Shard starts the index of the shard at path. Its methods run on the
	// worker that scans the shard, so shards are indexed in parallel, under
	// ctx, the scan's (a remote shard's reads and stats take it).
	Shard(ctx context.Context, path string) ShardIndexer
	// Finish writes what spans the dataset, the shards (each ended without
	// error) in the order they were planned; written reports how many files
	// it wrote.
	Finish(ctx context.Context, shards []string) (written int, err error)
}

// ShardIndexer builds one shard's index. Member takes the shard's members
// in tar order (valid only during the call: keep copies); End is told where
// the archive's content ends, writes the shard's files (if the loader has
// any) and says how many. Where the Shard's ctx carries a safefile.Group
// (a fold's pass gives one), the files are committed in it: they appear,
// synced, with others, thousands at a time, the last once the pass is over. An error wrapping ErrNoIndex reports a shard the
// loader does not index.
type ShardIndexer interface {
	Member(m *tarfile.Member)
	End(end int64) (files int, err error)
}

// A Set is the loaders' indexes of one run, over one dataset: every fold
// indexed with it (fold.IndexOptions.Loaders) adds its shards, and Finish
// writes what spans the dataset once all are read.
type Set struct {
	kinds  []Loader
	splits Splits

	mu     sync.Mutex
	shards []string // in plan order
	folds  []Fold   // the same shards, by fold, in plan order
	seen   map[string]bool
	stats  Stats
}

// The fold's pass hands a Set each shard's members.
var _ fold.LoaderIndexes = (*Set)(nil)

// Stats counts the loaders' index files written, by loader, and the
// shards a loader does not index, with why.
type Stats struct {
	Written map[string]int      `json:"written"`
	None    map[string][]string `json:"not_indexed,omitempty"`
}

// NewSet gathers the loaders' indexes to write from one pass.
func NewSet(kinds ...Loader) *Set {
	return &Set{kinds: kinds, seen: map[string]bool{},
		stats: Stats{Written: map[string]int{}, None: map[string][]string{}}}
}

// Names are the loaders' names, in the order they were given.
func (l *Set) Names() []string {
	names := make([]string, len(l.kinds))
	for i, k := range l.kinds {
		names[i] = k.Name()
	}
	return names
}

// A ShardFiler is a Loader that writes a file of each shard's own (not
// spanning the dataset): ShardFile says where.
type ShardFiler interface {
	ShardFile(shard string) string
}

// ShardFiles are the files the loaders write of each of these shards alone
// (not what spans the dataset), where they are written.
func (l *Set) ShardFiles(shards []string) []string {
	var files []string
	for _, k := range l.kinds {
		if so, ok := k.(ShardFiler); ok {
			for _, s := range shards {
				files = append(files, so.ShardFile(s))
			}
		}
	}
	return files
}

// SetSplits maps the dataset's folds, by name, to split parts, over what
// their names tell (see FoldLoader).
func (l *Set) SetSplits(s Splits) { l.splits = s }

// Plan adds shards to the dataset, in order, as one fold named as
// shardset names a fold of them (imagenet-val-000000.tar...: fold
// imagenet-val; "" when their names give several); a shard planned twice
// is indexed once.
func (l *Set) Plan(shards []string) {
	l.PlanFold(shardset.FoldName(shards), shards)
}

// PlanFold adds shards to the dataset, in order, as shards of the fold
// of that name.
func (l *Set) PlanFold(fold string, shards []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := slices.IndexFunc(l.folds, func(f Fold) bool { return f.Name == fold })
	for _, s := range shards {
		if l.seen[s] {
			continue
		}
		l.seen[s] = true
		l.shards = append(l.shards, s)
		if i < 0 {
			i = len(l.folds)
			l.folds = append(l.folds, Fold{Name: fold})
		}
		l.folds[i].Shards = append(l.folds[i].Shards, s)
	}
}

// plan is the shards planned, and the folds, with their split parts when
// a loader keeps them apart: ErrSplit when they cannot be told.
func (l *Set) plan() (shards []string, folds []Fold, err error) {
	l.mu.Lock()
	shards = slices.Clone(l.shards)
	folds = make([]Fold, len(l.folds))
	for i, f := range l.folds {
		folds[i] = Fold{Name: f.Name, Shards: slices.Clone(f.Shards)}
	}
	l.mu.Unlock()
	for _, k := range l.kinds {
		if fl, ok := k.(FoldLoader); ok && fl.Splits() {
			return shards, folds, l.splits.tell(folds)
		}
	}
	return shards, folds, nil
}

// outputs are the files loader k writes for the plan.
func outputs(k Loader, shards []string, folds []Fold) []string {
	if fl, ok := k.(FoldLoader); ok {
		return fl.FoldOutputs(folds)
	}
	return k.Outputs(shards)
}

// Outputs are the files the loaders will write for the shards planned, or
// an error wrapping ErrOutputClash naming two shards whose indexes would
// be one file, or ErrSplit for folds whose split parts cannot be told
// (call it before the pass: nothing is written then).
func (l *Set) Outputs() ([]string, error) {
	shards, folds, err := l.plan()
	if err != nil {
		return nil, err
	}
	var all []string
	for _, k := range l.kinds {
		outs := outputs(k, shards, folds)
		byPath := map[string]int{}
		for i, o := range outs {
			if j, dup := byPath[filepath.Clean(o)]; dup {
				return nil, fmt.Errorf("%s: %s and %s: %w", k.Name(), outs[j], o, ErrOutputClash)
			}
			byPath[filepath.Clean(o)] = i
		}
		all = append(all, outs...)
	}
	return all, nil
}

// Shard starts every loader's index of the shard at path, for the worker
// that scans it.
func (l *Set) Shard(ctx context.Context, path string) fold.MemberSink {
	x := &shardIndexers{l: l, path: path}
	for _, k := range l.kinds {
		x.ix = append(x.ix, k.Shard(ctx, path))
	}
	return x
}

// Finish writes what spans the dataset, loader by loader, and returns the
// counts of all the files written, and every loader's error.
func (l *Set) Finish(ctx context.Context) (*Stats, error) {
	shards, folds, err := l.plan()
	if err != nil {
		return l.Stats(), err
	}
	var errs []error
	for _, k := range l.kinds {
		// One loader's refusal of the dataset is no reason to leave the
		// others' indexes unwritten.
		var n int
		var err error
		if fl, ok := k.(FoldLoader); ok {
			n, err = fl.FinishFolds(ctx, folds)
		} else {
			n, err = k.Finish(ctx, shards)
		}
		l.count(k.Name(), n)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s index: %w", k.Name(), err))
		}
	}
	return l.Stats(), errors.Join(errs...)
}

// Stats are the counts so far.
func (l *Set) Stats() *Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := Stats{Written: map[string]int{}, None: map[string][]string{}}
	for k, v := range l.stats.Written {
		st.Written[k] = v
	}
	for k, v := range l.stats.None {
		st.None[k] = append([]string(nil), v...)
		sort.Strings(st.None[k])
	}
	return &st
}

func (l *Set) count(name string, n int) {
	l.mu.Lock()
	l.stats.Written[name] += n
	l.mu.Unlock()
}

func (l *Set) none(name, why string) {
	l.mu.Lock()
	l.stats.None[name] = append(l.stats.None[name], why)
	l.mu.Unlock()
}

// shardIndexers are every loader's index of one shard.
type shardIndexers struct {
	l    *Set
	path string
	ix   []ShardIndexer
}

func (x *shardIndexers) Member(m *tarfile.Member) {
	for _, i := range x.ix {
		i.Member(m)
	}
}

func (x *shardIndexers) End(end int64) error {
	for k, i := range x.ix {
		name := x.l.kinds[k].Name()
		n, err := i.End(end)
		switch {
		case errors.Is(err, ErrNoIndex):
			x.l.none(name, fmt.Sprintf("%s: %v", x.path, err))
		case err != nil:
			return fmt.Errorf("%s: %s index: %w", x.path, name, err)
		default:
			x.l.count(name, n)
		}
	}
	return nil
}

// BesideOrIn is path, or the file of its name in outDir when outDir is
// not "".
func BesideOrIn(path, outDir string) string {
	if outDir == "" {
		return path
	}
	return filepath.Join(outDir, filepath.Base(path))
}
