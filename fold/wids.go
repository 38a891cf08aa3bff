package fold

import (
	"context"
	"crypto/md5"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/wids"
	"github.com/itarconv/itarconv/remote"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// ErrLoaderDataset: a loader cannot use the dataset as it is, so its
// dataset-wide index is not written (energon: a key in two places; wids: a
// shard its loader cannot read).
var ErrLoaderDataset = errors.New("the loader cannot use this dataset")

// Wids is WebDataset wids' shard index of the dataset: one
// shardindex.json in the directory holding the shards (the deepest one
// holding them all), or in outDir when it is not "", its URLs relative to
// where it is written. With md5 it records each shard's MD5 sum (which
// reads every shard whole, and which the loader then checks).
func Wids(outDir string, md5 bool) Loader {
	return &widsLoader{outDir: outDir, md5: md5, shards: map[string]*widsShard{}}
}

type widsLoader struct {
	outDir string
	md5    bool

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
		dir = commonDir(shards)
	}
	return filepath.Join(dir, wids.DefaultName)
}

func (w *widsLoader) Outputs(shards []string) []string { return []string{w.out(shards)} }

func (w *widsLoader) Shard(ctx context.Context, path string) ShardIndexer {
	s := &widsShard{ctx: ctx, path: path, md5: w.md5}
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
	if s.err != nil {
		return 0, nil
	}
	size, err := shardSize(s.ctx, s.path)
	if err != nil {
		return 0, err
	}
	s.shard.FileSize = size
	if s.shard.NSamples, s.err = s.count.Samples(size); s.err != nil {
		s.count = wids.Counter{}
		return 0, nil
	}
	if s.md5 {
		s.shard.MD5Sum, err = shardMD5(s.ctx, s.path)
	}
	s.count = wids.Counter{} // the names it kept serve this shard's count only
	return 0, err
}

// widsPart is what a task keeps of a shard for the merge's index.
type widsPart struct {
	Shard wids.Shard
	Err   string
}

func (w *widsLoader) saveShard(enc *gob.Encoder, path string) error {
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

func (w *widsLoader) loadShard(dec *gob.Decoder, path string) error {
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

// Finish writes the index, or none (ErrLoaderDataset) when the loader
// could not read a shard: the tool writes none then either.
func (w *widsLoader) Finish(ctx context.Context, shards []string) (int, error) {
	out := w.out(shards)
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
		return 0, fmt.Errorf("%s not written: %d shards wids cannot read: %s: %w", out, len(bad), firstFew(bad), ErrLoaderDataset)
	}
	if len(list) == 0 {
		return 0, nil
	}
	return 1, writeFile(out, wids.New(list).Bytes())
}

// commonDir is the deepest directory holding every path.
func commonDir(paths []string) string {
	if len(paths) == 0 {
		return "."
	}
	dir := filepath.Dir(paths[0])
	for _, p := range paths[1:] {
		for !within(filepath.Dir(p), dir) {
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return dir
}

// within tells whether dir is root or below it (lexically).
func within(dir, root string) bool {
	rel, err := filepath.Rel(root, dir)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// firstFew joins up to three of the messages, saying how many more.
func firstFew(msgs []string) string {
	if len(msgs) <= 3 {
		return strings.Join(msgs, "; ")
	}
	return strings.Join(msgs[:3], "; ") + "; and " + strconv.Itoa(len(msgs)-3) + " more"
}

func init() {
	loaderKinds = append(loaderKinds, &loaderKind{
		name: "wids", unit: "shards",
		detect: func(path string) bool {
			b, err := readHead(path, 4096)
			return err == nil && strings.HasPrefix(strings.TrimSpace(string(b)), "{") && strings.Contains(string(b), `"`+wids.Kind+`"`)
		},
		shards: func(ctx context.Context, path string) ([]string, error) {
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
		read: func(ctx context.Context, path string, _ []string) ([]loaderEntry, error) {
			ix, err := readWids(path)
			if err != nil {
				return nil, err
			}
			var es []loaderEntry
			for _, s := range ix.Shards {
				es = append(es, loaderEntry{shard: widsShardPath(path, s.URL), name: "shard", what: widsWhat(s)})
			}
			return es, nil
		},
		expect: func(ctx context.Context, path string, shards []string) (func(string) MemberSink, func() ([]loaderEntry, error)) {
			md5 := false
			if ix, err := readWids(path); err == nil {
				for _, s := range ix.Shards {
					md5 = md5 || s.MD5Sum != ""
				}
			}
			return perShard(shards, func(p string) *widsShard { return &widsShard{ctx: ctx, path: p, md5: md5} },
				func(p string, s *widsShard) ([]loaderEntry, error) {
					if s.err != nil {
						return nil, &loaderFormatError{fmt.Errorf("%s: %w", p, s.err)}
					}
					return []loaderEntry{{shard: p, name: "shard", what: widsWhat(s.shard)}}, nil
				})
		},
	})
}

func readWids(path string) (*wids.Index, error) {
	b, err := pathguard.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ix, err := wids.Parse(b)
	if err != nil {
		return nil, &loaderFormatError{fmt.Errorf("%s: %w", path, err)}
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
	f, err := remote.Open(ctx, path, remote.Options{})
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
