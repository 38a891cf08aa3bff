package wids

import (
	"context"
	"crypto/md5"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/wids"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/loaders"
	"github.com/itarconv/itarconv/remote"
)

// New is WebDataset wids' shard index of the dataset: one
// shardindex.json in the directory holding the shards (the deepest one
// holding them all), or in outDir when it is not "", its URLs relative to
// where it is written. Through a loaders.Set, a dataset of several folds
// gets an index per fold instead, <fold>.shardindex.json named after the
// fold (see FoldOutputs). With md5 it records each shard's MD5 sum (which
// reads every shard whole, and which the loader then checks).
func New(outDir string, md5 bool) loaders.Loader {
	return &widsLoader{outDir: outDir, md5: md5, shards: map[string]*widsShard{}}
}

// NewWith is New with the options' output directory and MD5, and a
// shard's names kept in memory up to o.ShardMemory() (past it, in a
// temporary file beside the shard, or in the output directory).
func NewWith(o loaders.Options) loaders.Loader {
	w := New(o.OutDir, o.MD5).(*widsLoader)
	w.memory = o.ShardMemory()
	return w
}

type widsLoader struct {
	outDir string
	md5    bool
	memory int // a shard's names kept in memory; 0 all of them

	mu     sync.Mutex
	shards map[string]*widsShard
}

type widsShard struct {
	ctx   context.Context // the scan's
	path  string
	md5   bool
	count wids.Counter
	shard wids.Shard
	err   error
}

func (*widsLoader) Name() string { return "wids" }

// out is where the index of the shards goes.
func (w *widsLoader) out(shards []string) string {
	dir := w.outDir
	if dir == "" {
		dir = loaders.CommonDir(shards)
	}
	return filepath.Join(dir, wids.DefaultName)
}

func (w *widsLoader) Outputs(shards []string) []string { return []string{w.out(shards)} }

func (w *widsLoader) Shard(ctx context.Context, path string) loaders.ShardIndexer {
	s := &widsShard{ctx: ctx, path: path, md5: w.md5}
	s.count.Memory, s.count.TempDir = w.memory, loaders.TempDir(loaders.BesideOrIn(path, w.outDir))
	w.mu.Lock()
	w.shards[path] = s
	w.mu.Unlock()
	return s
}

func (s *widsShard) Member(m *tarfile.Member) {
	if s.err == nil {
		s.err = s.count.Add(m)
	}
}

// End counts the shard's samples as the loader will; the index is written
// by Finish.
func (s *widsShard) End(int64) (int, error) {
	defer s.count.Release()
	if s.err != nil {
		return 0, nil
	}
	size, err := fold.ShardSize(s.ctx, s.path)
	if err != nil {
		return 0, err
	}
	s.shard.FileSize = size
	if s.shard.NSamples, s.err = s.count.Samples(size); s.err != nil {
		return 0, nil
	}
	if s.md5 {
		s.shard.MD5Sum, err = shardMD5(s.ctx, s.path)
	}
	return 0, err
}

// widsPart is what a task keeps of a shard for the merge's index.
type widsPart struct {
	Shard wids.Shard
	Err   string
}

// SaveShard keeps a shard's count in a task's part.
func (w *widsLoader) SaveShard(enc *gob.Encoder, path string) error {
	w.mu.Lock()
	s := w.shards[path]
	w.mu.Unlock()
	if s == nil {
		return fmt.Errorf("not indexed")
	}
	p := widsPart{Shard: s.shard}
	if s.err != nil {
		p.Err = s.err.Error()
	}
	return enc.Encode(p)
}

// LoadShard restores what SaveShard kept.
func (w *widsLoader) LoadShard(dec *gob.Decoder, path string) error {
	var p widsPart
	if err := dec.Decode(&p); err != nil {
		return err
	}
	s := &widsShard{path: path, md5: w.md5, shard: p.Shard}
	if p.Err != "" {
		s.err = errors.New(p.Err)
	}
	w.mu.Lock()
	w.shards[path] = s
	w.mu.Unlock()
	return nil
}

// Splits: wids' indexes are per fold; they need no split part.
func (*widsLoader) Splits() bool { return false }

// The Set hands it the folds.
var _ loaders.FoldLoader = (*widsLoader)(nil)

// foldOut is where the index of a fold goes, when the dataset has
// several: <fold>.shardindex.json, in the directory holding the fold's
// shards (or outDir).
func (w *widsLoader) foldOut(f loaders.Fold) string {
	dir := w.outDir
	if dir == "" {
		dir = loaders.CommonDir(f.Shards)
	}
	if f.Name == "" {
		return filepath.Join(dir, wids.DefaultName)
	}
	name := strings.Map(func(r rune) rune {
		if r == '/' || r == filepath.Separator {
			return '_'
		}
		return r
	}, f.Name)
	return filepath.Join(dir, name+"."+wids.DefaultName)
}

// FoldOutputs is the index of the dataset, as Outputs, for one fold; an
// index per fold for several, so that none lists two folds' shards
// (train and val mixed).
func (w *widsLoader) FoldOutputs(folds []loaders.Fold) []string {
	if len(folds) == 1 {
		return w.Outputs(folds[0].Shards)
	}
	var outs []string
	for _, f := range folds {
		outs = append(outs, w.foldOut(f))
	}
	return outs
}

// FinishFolds writes the fold's index as Finish does, or for several
// folds, each fold's, named after the fold; a fold with a shard the
// loader cannot read gets none (ErrDataset), the others theirs.
func (w *widsLoader) FinishFolds(ctx context.Context, folds []loaders.Fold) (int, error) {
	if len(folds) == 1 {
		return w.Finish(ctx, folds[0].Shards)
	}
	written := 0
	var errs []error
	for _, f := range folds {
		n, err := w.write(w.foldOut(f), f.Shards, f.Name)
		written += n
		if err != nil {
			errs = append(errs, err)
		}
	}
	return written, errors.Join(errs...)
}

// Finish writes the index, or none (ErrLoaderDataset) when the loader
// could not read a shard: the tool writes none then either.
func (w *widsLoader) Finish(ctx context.Context, shards []string) (int, error) {
	return w.write(w.out(shards), shards, "")
}

// write writes the index of shards at out, named name ("": as widsindex
// create names it, after the first shard).
func (w *widsLoader) write(out string, shards []string, name string) (int, error) {
	var list []wids.Shard
	var bad []string
	for _, p := range shards {
		s := w.shards[p]
		if s == nil {
			continue
		}
		if s.err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", p, s.err))
			continue
		}
		// A remote shard is named by its URL: the index is read here,
		// the shards where they live.
		u, err := remote.StoredURL(p, true) // never its user info
		if !remote.IsURL(p) {
			u, err = wids.URL(filepath.Dir(out), p)
		}
		if err != nil {
			bad = append(bad, fmt.Sprintf("%s: %v", p, err))
			continue
		}
		sh := s.shard
		sh.URL = u
		list = append(list, sh)
	}
	if len(bad) > 0 {
		return 0, fmt.Errorf("%s not written: %d shards wids cannot read: %s: %w", out, len(bad), loaders.FirstFew(bad), loaders.ErrDataset)
	}
	if len(list) == 0 {
		return 0, nil
	}
	ix := wids.New(list)
	if name != "" {
		ix.Name = name
	}
	return 1, loaders.WriteFile(out, ix.Bytes())
}

func init() {
	loaders.Register(&loaders.Plugin{Name: "wids", Order: 20, Help: "WebDataset wids' shardindex.json beside the shards; with several folds, <fold>.shardindex.json each",
		New:     NewWith,
		Indexes: []*loaders.Index{index}})
}

var index = &loaders.Index{
	Unit: "shards",
	Detect: func(path string) bool {
		b, err := loaders.ReadHead(path, 4096)
		return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "{") && strings.Contains(string(b), `"`+wids.Kind+`"`)
	},
	Shards: func(ctx context.Context, path string) ([]string, error) {
		ix, err := readWids(path)
		if err != nil {
			return nil, err
		}
		var shards []string
		for _, s := range ix.Shards {
			shards = append(shards, widsShardPath(path, s.URL))
		}
		return shards, nil
	},
	Read: func(ctx context.Context, path string, _ []string) ([]loaders.Entry, error) {
		ix, err := readWids(path)
		if err != nil {
			return nil, err
		}
		var es []loaders.Entry
		for _, s := range ix.Shards {
			es = append(es, loaders.Entry{Shard: widsShardPath(path, s.URL), Name: "shard", What: widsWhat(s)})
		}
		return es, nil
	},
	Expect: func(ctx context.Context, path string, shards []string) (func(string) fold.MemberSink, func() ([]loaders.Entry, error)) {
		md5 := false
		if ix, err := readWids(path); err == nil {
			for _, s := range ix.Shards {
				md5 = md5 || s.MD5Sum != ""
			}
		}
		return loaders.PerShard(shards, func(p string) *widsShard { return &widsShard{ctx: ctx, path: p, md5: md5} },
			func(p string, s *widsShard) ([]loaders.Entry, error) {
				if s.err != nil {
					return nil, &loaders.FormatError{Err: fmt.Errorf("%s: %w", p, s.err)}
				}
				return []loaders.Entry{{Shard: p, Name: "shard", What: widsWhat(s.shard)}}, nil
			})
	},
}

func readWids(path string) (*wids.Index, error) {
	b, err := pathguard.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ix, err := wids.Parse(b)
	if err != nil {
		return nil, &loaders.FormatError{Err: fmt.Errorf("%s: %w", path, err)}
	}
	return ix, nil
}

// widsShardPath is the file a URL of the index at index names.
func widsShardPath(index, url string) string {
	if remote.IsURL(url) {
		return url
	}
	if filepath.IsAbs(filepath.FromSlash(url)) {
		return filepath.FromSlash(url)
	}
	return filepath.Join(filepath.Dir(index), filepath.FromSlash(url))
}

func widsWhat(s wids.Shard) string {
	what := fmt.Sprintf("%d samples, %d bytes", s.NSamples, s.FileSize)
	if s.MD5Sum != "" {
		what += ", md5 " + s.MD5Sum
	}
	return what
}

// shardMD5 is the MD5 sum of a shard's bytes (a remote one streamed).
func shardMD5(ctx context.Context, path string) (string, error) {
	if !remote.IsURL(path) {
		return wids.FileMD5Context(ctx, path)
	}
	f, err := remote.ClientFrom(ctx).Open(ctx, path)
	if err != nil {
		return "", err
	}
	r := f.Reader()
	defer r.Close()
	h := md5.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
