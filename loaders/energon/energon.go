package energon

import (
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/energon"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/loaders"
	"github.com/itarconv/itarconv/remote"
)

// New is Megatron-Energon's index of the dataset, as `energon prepare
// --split-ratio 1,0,0` writes it: <shard>.tar.idx beside each shard (or in
// outDir), and the dataset's .nv-meta directory (index.sqlite, .info.json,
// split.yaml, index.uuid) in the directory holding the shards (or in
// outDir), shards named relative to that directory. Through a
// loaders.Set, folds in other split parts than train (imagenet-val) are
// listed under their parts in split.yaml, as `energon prepare
// --split-parts` writes them.
func New(outDir string) loaders.Loader {
	return NewWith(loaders.Options{OutDir: outDir})
}

// NewWith is New with the options' output directory and memory budget
// (the shards' rows of index.sqlite past it wait in a temporary file).
func NewWith(o loaders.Options) loaders.Loader {
	memory := o.Memory
	if memory == 0 {
		memory = loaders.DefaultMemory
	}
	return &energonLoader{outDir: o.OutDir, memory: memory, shardMemory: o.ShardMemory(), shards: map[string]*energonIndexer{}}
}

type energonLoader struct {
	outDir      string
	memory      int64
	shardMemory int // a shard's builder's share (see IdxBuilder.Memory)

	mu     sync.Mutex
	shards map[string]*energonIndexer
	spool  *energon.Spool // made with the first shard, closed by Finish
}

// spoolFor is the spool of the shards' rows, made beside the first shard
// read (or in the output directory), where .nv-meta goes.
func (e *energonLoader) spoolFor(shard string) *energon.Spool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.spool == nil {
		dir := e.outDir
		if dir == "" && !remote.IsURL(shard) {
			dir = filepath.Dir(shard)
		}
		// The rest for the indexes' keys and the shards' builders; a
		// budget under 32 bytes is a byte, not NewSpool's default.
		budget := max(e.memory/32, 1)
		if e.memory < 0 {
			budget = -1
		}
		e.spool = energon.NewSpool(dir, budget)
	}
	return e.spool
}

func (*energonLoader) Name() string { return "energon" }

func (e *energonLoader) idxPath(shard string) string {
	return loaders.BesideOrIn(energon.IdxPath(shard), e.outDir)
}

// metaDir is the directory that gets .nv-meta.
func (e *energonLoader) metaDir(shards []string) string {
	if e.outDir != "" {
		return e.outDir
	}
	return loaders.CommonDir(shards)
}

func (e *energonLoader) Outputs(shards []string) []string {
	var outs []string
	for _, s := range shards {
		outs = append(outs, e.idxPath(s))
	}
	meta := filepath.Join(e.metaDir(shards), energon.MetaDir)
	for _, f := range []string{energon.IndexFile, energon.UUIDFile, energon.SplitYAMLFile, energon.InfoJSONFile} {
		outs = append(outs, filepath.Join(meta, f))
	}
	return outs
}

func (e *energonLoader) Shard(ctx context.Context, path string) loaders.ShardIndexer {
	x := &energonIndexer{ctx: ctx, out: e.idxPath(path), spool: e.spoolFor(path)}
	x.b.Memory, x.b.TempDir = e.shardMemory, loaders.TempDir(x.out)
	e.mu.Lock()
	e.shards[path] = x
	e.mu.Unlock()
	return x
}

// energonIndexer builds a shard's .tar.idx and keeps its samples for the
// dataset's index.sqlite.
type energonIndexer struct {
	ctx     context.Context // the scan's: End's file is committed with its group
	out     string          // "" for an index kept in memory
	b       energon.IdxBuilder
	end     int64
	unknown string // a member whose part energon's numbers cannot be had for
	// spool, if not nil, asks End to prepare the shard's rows of
	// index.sqlite (prepared), on the worker that read the shard, kept in
	// spool past its budget; the builder is then let go.
	spool    *energon.Spool
	prepared *energon.PreparedShard
	err      error // preparing the rows
}

// Member takes what Python's tarfile calls a regular file, as energon
// does: '0' (or NUL), '7' and sparse members.
func (x *energonIndexer) Member(m *tarfile.Member) {
	switch m.Typeflag {
	case tarfile.TypeReg, tarfile.TypeCont, tarfile.TypeGNUSparse:
	default:
		return
	}
	size := m.Size
	if m.Sparse {
		size = m.RealSize
		if v, _ := m.PAXValue("GNU.sparse.major"); v == "1" && x.unknown == "" {
			// tarfile's data offset of such a member lies past the
			// sparse map that starts its payload, which is not read.
			x.unknown = string(m.Name)
		}
	}
	x.b.AddMemberBytes(m.Name, m.FirstOffset, m.DataOffset, size)
}

func (x *energonIndexer) End(end int64) (int, error) {
	x.end = end
	if x.out == "" {
		return 0, nil
	}
	err := loaders.WriteFileTo(x.ctx, x.out, idxTo{&x.b, end})
	if err != nil {
		x.b.Release()
		return 0, err
	}
	if x.spool != nil {
		// What index.sqlite needs of the shard, made here, on the
		// worker, rather than once every shard is read.
		x.prepared, x.err = x.b.Prepared(end, x.spool)
		x.b = energon.IdxBuilder{}
	}
	return 1, nil
}

// idxTo writes a builder's .tar.idx.
type idxTo struct {
	b   *energon.IdxBuilder
	end int64
}

func (t idxTo) WriteTo(w io.Writer) (int64, error) { return t.b.WriteIdx(w, t.end) }

// Splits: .nv-meta's split.yaml puts each fold in its split part.
func (*energonLoader) Splits() bool { return true }

// FoldOutputs are Outputs of every fold's shards: one dataset.
func (e *energonLoader) FoldOutputs(folds []loaders.Fold) []string {
	return e.Outputs(allShards(folds))
}

// FinishFolds writes .nv-meta over every fold's shards, its split.yaml
// listing each fold's shards under the fold's split part, as energon
// prepare --split-parts does; all in train is --split-ratio 1,0,0's.
func (e *energonLoader) FinishFolds(ctx context.Context, folds []loaders.Fold) (int, error) {
	parts := map[string]string{}
	mixed := false
	for _, f := range folds {
		for _, s := range f.Shards {
			parts[s] = f.Split
		}
		mixed = mixed || f.Split != "train"
	}
	if !mixed {
		parts = nil
	}
	return e.finish(ctx, allShards(folds), parts)
}

// allShards are the folds' shards, fold after fold.
func allShards(folds []loaders.Fold) []string {
	var all []string
	for _, f := range folds {
		all = append(all, f.Shards...)
	}
	return all
}

// Finish writes .nv-meta, or nothing when energon could not use the
// dataset (a sample key in two places, a shard without samples).
func (e *energonLoader) Finish(ctx context.Context, shards []string) (int, error) {
	return e.finish(ctx, shards, nil)
}

// finish is Finish, with each shard's split part (nil: all in train).
func (e *energonLoader) finish(ctx context.Context, shards []string, parts map[string]string) (int, error) {
	defer func() {
		e.mu.Lock()
		sp := e.spool
		e.spool = nil
		e.mu.Unlock()
		if sp != nil {
			sp.Close()
		}
	}()
	if len(shards) == 0 {
		return 0, nil
	}
	base := loaders.CommonDir(shards)
	var all []*energon.PreparedShard
	partOf := map[string]string{} // by name in the dataset
	for _, p := range shards {
		x := e.shards[p]
		if x == nil {
			continue
		}
		if x.unknown != "" {
			return 0, fmt.Errorf("%s: member %s: a pax sparse member of format 1.0, whose part energon places past its sparse map: not supported: %w", p, human.Name(x.unknown), loaders.ErrDataset)
		}
		rel, err := filepath.Rel(base, p)
		if err != nil {
			return 0, err
		}
		if remote.IsURL(p) && (strings.HasPrefix(rel, "..") || strings.Contains(rel, ":")) {
			// .nv-meta names shards relative to where it lies: beside
			// them, under one prefix.
			return 0, fmt.Errorf("%s: energon's .nv-meta names shards relative to one location; these are under several: %w", p, loaders.ErrDataset)
		}
		ps, err := x.rows()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", p, err)
		}
		ps.Name = filepath.ToSlash(rel)
		all = append(all, ps)
		partOf[ps.Name] = parts[p]
	}
	slices.SortStableFunc(all, func(a, b *energon.PreparedShard) int {
		switch {
		case energon.ShardLess(a.Name, b.Name):
			return -1
		case energon.ShardLess(b.Name, a.Name):
			return 1
		}
		return 0
	})
	opts := energon.MetaOptions{Memory: e.memory}
	if parts != nil {
		opts.Splits = splitParts(all, partOf)
	}
	dir := e.metaDir(shards)
	err := energon.WritePrepared(ctx, dir, all, opts)
	if errors.Is(err, energon.ErrDuplicateKey) || errors.Is(err, energon.ErrNoSamples) || errors.Is(err, energon.ErrName) || errors.Is(err, energon.ErrSplitPart) {
		return 0, fmt.Errorf("%s not written: %w: %w", filepath.Join(dir, energon.MetaDir), loaders.ErrDataset, err)
	}
	if err != nil {
		return 0, err
	}
	n := 4
	if _, err := os.Stat(filepath.Join(dir, energon.MetaDir, energon.InfoYAMLFile)); err == nil {
		n++
	}
	return n, nil
}

// splitParts are split.yaml's parts, in energon's order (train, val,
// test) and only those with shards, as prepare --split-parts writes the
// parts given to it: each lists its shards, in the dataset's order.
func splitParts(shards []*energon.PreparedShard, partOf map[string]string) []energon.Split {
	var parts []energon.Split
	for _, name := range loaders.SplitParts {
		p := energon.Split{Name: name}
		for _, s := range shards {
			if partOf[s.Name] == name {
				p.Shards = append(p.Shards, s.Name)
			}
		}
		if len(p.Shards) > 0 {
			parts = append(parts, p)
		}
	}
	return parts
}

// rows are the shard's rows of index.sqlite, prepared by End or now.
func (x *energonIndexer) rows() (*energon.PreparedShard, error) {
	if x.prepared != nil || x.err != nil {
		return x.prepared, x.err
	}
	x.prepared, x.err = x.b.Prepared(x.end, nil)
	x.b = energon.IdxBuilder{}
	return x.prepared, x.err
}

// energonPart is what a task keeps of a shard for the merge's .nv-meta:
// its rows as they were prepared (a copy of bytes each way, where gob
// took a value a field and the merge prepared them again: a third of a
// merge's time).
type energonPart struct {
	Format  int // energonPartFormat: gob takes a part of another layout for zeros
	Rows    energon.Compact
	End     int64
	Unknown string
}

// energonPartFormat numbers energonPart's layout (1 kept the rows as
// values, before the compact form).
const energonPartFormat = 2

// SaveShard keeps a shard's samples in a task's part.
func (e *energonLoader) SaveShard(enc *gob.Encoder, path string) error {
	e.mu.Lock()
	x := e.shards[path]
	e.mu.Unlock()
	if x == nil {
		return fmt.Errorf("not indexed")
	}
	ps, err := x.rows()
	if err != nil {
		return err
	}
	c, err := ps.Compact()
	if err != nil {
		return err
	}
	return enc.Encode(energonPart{Format: energonPartFormat, Rows: c, End: x.end, Unknown: x.unknown})
}

// LoadShard restores what SaveShard kept.
func (e *energonLoader) LoadShard(dec *gob.Decoder, path string) error {
	var p energonPart
	if err := dec.Decode(&p); err != nil {
		return err
	}
	if p.Format != energonPartFormat {
		return fmt.Errorf("energon rows kept in layout %d, this itarconv reads %d (a part of another version)", p.Format, energonPartFormat)
	}
	ps, err := energon.PrepareCompact("", p.End, p.Rows, e.spoolFor(path))
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.shards[path] = &energonIndexer{end: p.End, unknown: p.Unknown, prepared: ps}
	e.mu.Unlock()
	return nil
}

// The Set hands it the folds.
var _ loaders.FoldLoader = (*energonLoader)(nil)

// ShardFile is the shard's .tar.idx.
func (e *energonLoader) ShardFile(shard string) string { return e.idxPath(shard) }

func init() {
	loaders.Register(&loaders.Plugin{Name: "energon", Order: 10, Help: "<shard>.tar.idx beside each shard, .nv-meta/ beside the shards",
		New:     NewWith,
		Indexes: []*loaders.Index{idxIndex, metaIndex}})
}

// idxIndex is a shard's .tar.idx.
var idxIndex = &loaders.Index{
	Unit: "samples",
	Detect: func(path string) bool {
		return strings.HasSuffix(path, ".tar"+energon.IdxSuffix) && !loaders.StartsWith(path, "v1.")
	},
	Shards: func(ctx context.Context, path string) ([]string, error) {
		return []string{strings.TrimSuffix(path, energon.IdxSuffix)}, nil
	},
	Read: func(ctx context.Context, path string, shards []string) ([]loaders.Entry, error) {
		b, err := pathguard.ReadFile(path)
		if err != nil {
			return nil, err
		}
		starts, end, err := energon.ParseIdx(b)
		if err != nil {
			return nil, &loaders.FormatError{Err: fmt.Errorf("%s: %w", path, err)}
		}
		return energonIdxEntries(shards[0], starts, end), nil
	},
	Expect: func(ctx context.Context, _ string, shards []string) (func(string) fold.MemberSink, func() ([]loaders.Entry, error)) {
		return loaders.PerShard(shards, func(string) *energonIndexer { return &energonIndexer{} },
			func(p string, x *energonIndexer) ([]loaders.Entry, error) {
				starts, end, err := energon.ParseIdx(x.b.Bytes(x.end))
				if err != nil {
					return nil, err
				}
				return energonIdxEntries(p, starts, end), nil
			})
	},
}

// metaIndex is the dataset's .nv-meta.
var metaIndex = &loaders.Index{
	Unit: "samples",
	Detect: func(path string) bool {
		if filepath.Base(filepath.Clean(path)) != energon.MetaDir {
			return false
		}
		st, err := os.Stat(path)
		return err == nil && st.IsDir()
	},
	Shards: func(ctx context.Context, path string) ([]string, error) {
		m, err := readEnergonMeta(ctx, path)
		if err != nil {
			return nil, err
		}
		var shards []string
		for _, s := range m.Shards {
			shards = append(shards, filepath.Join(filepath.Dir(filepath.Clean(path)), filepath.FromSlash(s.Name)))
		}
		return shards, nil
	},
	Read: func(ctx context.Context, path string, shards []string) ([]loaders.Entry, error) {
		m, err := readEnergonMeta(ctx, path)
		if err != nil {
			return nil, err
		}
		if len(m.Shards) != len(shards) {
			return nil, fmt.Errorf("%s: %d shards, %d given", path, len(m.Shards), len(shards))
		}
		var es []loaders.Entry
		for i, s := range m.Shards {
			es = append(es, energonSampleEntries(shards[i], s)...)
		}
		return es, nil
	},
	Expect: func(ctx context.Context, path string, shards []string) (func(string) fold.MemberSink, func() ([]loaders.Entry, error)) {
		return loaders.PerShard(shards, func(string) *energonIndexer { return &energonIndexer{} },
			func(p string, x *energonIndexer) ([]loaders.Entry, error) {
				return energonSampleEntries(p, x.b.Shard(filepath.Base(p), x.end)), nil
			})
	},
}

func readEnergonMeta(ctx context.Context, path string) (*energon.Meta, error) {
	m, err := energon.ReadMetaContext(ctx, filepath.Dir(filepath.Clean(path)))
	if errors.Is(err, energon.ErrFormat) {
		return nil, &loaders.FormatError{Err: err}
	}
	return m, err
}

// energonIdxEntries are a .tar.idx's samples, by offset, and its end.
func energonIdxEntries(shard string, starts []uint64, end uint64) []loaders.Entry {
	es := []loaders.Entry{{Shard: shard, Name: "end of the archive", What: "offset " + strconv.FormatUint(end, 10), Aside: true}}
	for _, s := range starts {
		es = append(es, loaders.Entry{Shard: shard, Name: "sample at offset " + strconv.FormatUint(s, 10), What: "a sample starts there"})
	}
	return es
}

// energonSampleEntries are a shard's samples in index.sqlite, by key.
func energonSampleEntries(shard string, s energon.ShardSamples) []loaders.Entry {
	parts := make([][]string, len(s.Samples))
	for _, p := range s.Parts {
		parts[p.Sample] = append(parts[p.Sample], fmt.Sprintf("%s at %d (%d bytes)", p.Name, p.Offset, p.Size))
	}
	var es []loaders.Entry
	for i, x := range s.Samples {
		es = append(es, loaders.Entry{Shard: shard, Name: x.Key,
			What: fmt.Sprintf("%s; parts %s", loaders.OffsetSize(x.Offset, x.Size), strings.Join(parts[i], ", "))})
	}
	return es
}
