package loaders

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/itarconv/itarconv/fold"
)

// A Plugin is one data loader's indexes: how to write them from a pass
// over the shards' headers (New), and how to tell and check the files it
// writes (Indexes). Its package registers it in init; package loaders/all
// imports every plug-in.
type Plugin struct {
	// Name is the loader's name on the command line ("dali", "energon").
	Name string
	// Help says, for index --format's help, what the loader writes and
	// where.
	Help string
	// Order places the loader among the others: the index command lists
	// them, writes their indexes and finishes them in increasing Order.
	Order int
	// New makes the writer of the loader's indexes.
	New func(Options) Loader
	// Indexes are the kinds of file the loader writes that Detect tells
	// and Check checks (energon: a shard's .tar.idx and the dataset's
	// .nv-meta).
	Indexes []*Index
}

// Options tune a Loader.
type Options struct {
	// OutDir is where the indexes go: "" beside the shards, where their
	// loader looks for them.
	OutDir string
	// MD5 records each shard's MD5 sum, in an index that has one (wids):
	// it reads every shard whole.
	MD5 bool
	// Memory is how many bytes a loader keeps in memory of what it
	// gathers for the files that span the dataset; past it, that waits in
	// a temporary file beside the output (removed at the end), or is
	// built again when needed. energon keeps its shards' rows of
	// index.sqlite in a 32nd of it, and the keys of its indexes, as
	// it writes the file, in all of it. 0 is DefaultMemory; negative
	// keeps nothing in memory that can go. Each shard's index being
	// built (a shard's rows, lines, names, offsets) keeps a share of it,
	// ShardMemory, and past that waits in a temporary file beside the
	// index: so memory does not grow with the shards' sizes.
	Memory int64
	// Workers is how many shards are indexed at once (0: GOMAXPROCS):
	// the shards' builders share Memory among them.
	Workers int
}

// ShardMemory is the memory one loader's index of one shard keeps of what
// it gathers, past which the rest waits in a temporary file: Memory shared
// among the Workers' shards and the loaders, with room left for what
// spans the dataset, at least 64 KiB (a byte when Memory is negative).
func (o Options) ShardMemory() int {
	m := o.Memory
	if m == 0 {
		m = DefaultMemory
	}
	if m < 0 {
		return 1
	}
	w := o.Workers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	return int(max(m/int64(32*w), 64<<10))
}

// DefaultMemory is the budget of Options.Memory when it is 0.
const DefaultMemory = 256 << 20

// An Index knows one kind of a loader's index files: how to tell them,
// which shards one describes, what it says, and what the shards say
// instead.
type Index struct {
	// Unit names what the index counts ("samples", "files").
	Unit string
	// Detect tells an index file (or directory) of this kind.
	Detect func(path string) bool
	// Shards finds the shards the index describes, when none are given.
	Shards func(ctx context.Context, path string) ([]string, error)
	// Read is what the index at path says of the shards; an index its
	// loader cannot read is a *FormatError.
	Read func(ctx context.Context, path string, shards []string) ([]Entry, error)
	// Expect scans: a sink per shard, then what an index of the shards,
	// written now, would say.
	Expect func(ctx context.Context, path string, shards []string) (sink func(shard string) fold.MemberSink, entries func() ([]Entry, error))
}

// ErrUnknown: no loader of that name is registered.
var ErrUnknown = errors.New("no such loader")

var (
	mu      sync.RWMutex
	plugins []*Plugin // in Order
)

// Register adds a loader's plug-in. It panics on a plug-in without a name
// or New, or a name registered already: both are mistakes of the program.
func Register(p *Plugin) {
	if p == nil || p.Name == "" || p.New == nil {
		panic("loaders: Register of a plug-in without a name or New")
	}
	mu.Lock()
	defer mu.Unlock()
	for _, q := range plugins {
		if q.Name == p.Name {
			panic("loaders: Register called twice for " + p.Name)
		}
	}
	plugins = append(plugins, p)
	slices.SortStableFunc(plugins, func(a, b *Plugin) int { return a.Order - b.Order })
}

// Unregister removes the plug-in of that name (a test's toy loader).
func Unregister(name string) {
	mu.Lock()
	defer mu.Unlock()
	plugins = slices.DeleteFunc(plugins, func(p *Plugin) bool { return p.Name == name })
}

// Lookup is the plug-in of that name, or nil.
func Lookup(name string) *Plugin {
	mu.RLock()
	defer mu.RUnlock()
	for _, p := range plugins {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Names are the registered loaders' names, in Order.
func Names() []string {
	mu.RLock()
	defer mu.RUnlock()
	names := make([]string, len(plugins))
	for i, p := range plugins {
		names[i] = p.Name
	}
	return names
}

// New makes the writer of the named loader's indexes, or an error
// wrapping ErrUnknown.
func New(name string, opts Options) (Loader, error) {
	p := Lookup(name)
	if p == nil {
		return nil, fmt.Errorf("%q: %w", name, ErrUnknown)
	}
	return p.New(opts), nil
}

// Detect tells whether path is a registered loader's index file (or an
// energon dataset's .nv-meta directory), and whose.
func Detect(path string) (loader string, ok bool) {
	if p, _ := detect(path); p != nil {
		return p.Name, true
	}
	return "", false
}

func detect(path string) (*Plugin, *Index) {
	mu.RLock()
	defer mu.RUnlock()
	for _, p := range plugins {
		for _, k := range p.Indexes {
			if k.Detect(path) {
				return p, k
			}
		}
	}
	return nil, nil
}

// Build writes the named loader's indexes of shards (one dataset, in
// order) from one pass over their headers, into outDir ("" beside the
// shards), and returns the files it wrote.
func Build(ctx context.Context, name string, shards []string, outDir string) ([]string, error) {
	l, err := New(name, Options{OutDir: outDir})
	if err != nil {
		return nil, err
	}
	set := NewSet(l)
	if _, err := fold.BuildIndex(ctx, shards, "", fold.IndexOptions{Loaders: set}); err != nil {
		return nil, err
	}
	if _, err := set.Finish(ctx); err != nil {
		return nil, err
	}
	return set.Outputs()
}

// Problems checks the index at path against the shards it names, and says
// where they disagree, a line each (Check's Problems as text); the error
// is for what could not be checked.
func Problems(ctx context.Context, path string) ([]string, error) {
	rep, err := Check(ctx, path, nil, 1)
	if err != nil {
		return nil, err
	}
	lines := make([]string, len(rep.Problems))
	for i, p := range rep.Problems {
		lines[i] = p.String()
	}
	return lines, nil
}
