package fold

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/remote"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// A TARIDX file addresses shards by fid only; glzn finds them as the
// <fold>_<suffix>.tar files beside the index. An index of any other shard
// set (WebDataset's name-000000.tar, a list, shards in another directory)
// gets a manifest beside it, <index>.shards.json, naming its shards in fid
// order, relative to the index's directory (a remote shard by its URL, with
// its ETag where the server gives one), with each shard's size:
//
//	{"kind": "itarconv-shards", "version": 1, "index": "imagenet-train.taridx",
//	 "shards": [{"path": "imagenet-train-000000.tar", "size": 1073741824}, ...]}
//
// Opening an index reads its manifest when there is one, so ls, cat,
// verify and conversions find the shards from the index alone; verify
// reports a shard whose size changed.

// ManifestSuffix follows the index's file name to name its manifest.
const ManifestSuffix = ".shards.json"

const manifestKind = "itarconv-shards"

// ErrManifest: a shard manifest cannot be read as one.
var ErrManifest = errors.New("corrupt shard manifest")

// Manifest lists an index's shards.
type Manifest struct {
	Kind    string          `json:"kind"`
	Version int             `json:"version"`
	Index   string          `json:"index"`
	Shards  []ManifestShard `json:"shards"`
}

// ManifestShard is one shard: its path relative to the index's directory
// (slash-separated), and its size when indexed.
type ManifestShard struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
	// ETag is a remote shard's ETag when indexed, where its server
	// gives one: readers send it with every request (If-Match).
	ETag string `json:"etag,omitempty"`
}

// ManifestPath names the manifest of an index file.
func ManifestPath(indexPath string) string { return indexPath + ManifestSuffix }

// ReadManifest reads the manifest beside an index; an index without one
// gives an error wrapping fs.ErrNotExist.
func ReadManifest(indexPath string) (*Manifest, error) {
	p := ManifestPath(indexPath)
	b, err := pathguard.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%s: %v: %w", p, err, ErrManifest)
	}
	if m.Kind != manifestKind || m.Version != 1 {
		return nil, fmt.Errorf("%s: kind %q version %d, not %s version 1: %w", p, m.Kind, m.Version, manifestKind, ErrManifest)
	}
	if len(m.Shards) == 0 || len(m.Shards) > taridx.MaxShards {
		return nil, fmt.Errorf("%s: %d shards: %w", p, len(m.Shards), ErrManifest)
	}
	for i, s := range m.Shards {
		if s.Path == "" || s.Size < 0 {
			return nil, fmt.Errorf("%s: shard %d: path %q, size %d: %w", p, i, s.Path, s.Size, ErrManifest)
		}
	}
	return &m, nil
}

// Paths gives the manifest's shards as paths, for an index in dir.
func (m *Manifest) Paths(dir string) []string {
	out := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		if remote.IsURL(s.Path) {
			out[i] = s.Path
			continue
		}
		p := filepath.FromSlash(s.Path)
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		out[i] = p
	}
	return out
}

// ETags gives the remote shards' ETags when indexed ("" for local
// shards, and where the server gives none).
func (m *Manifest) ETags() []string {
	out := make([]string, len(m.Shards))
	for i, s := range m.Shards {
		out[i] = s.ETag
	}
	return out
}

// Sizes gives the shards' sizes when indexed.
func (m *Manifest) Sizes() []int64 {
	out := make([]int64, len(m.Shards))
	for i, s := range m.Shards {
		out[i] = s.Size
	}
	return out
}

// NeedsManifest tells whether glzn's rule would not find exactly these
// shards, in this order, beside the index: the index then needs a
// manifest.
func NeedsManifest(indexPath string, shards []string) bool {
	name := strings.TrimSuffix(filepath.Base(indexPath), ".taridx")
	folds, err := taridx.Discover(filepath.Dir(indexPath))
	if err != nil {
		return true
	}
	for _, f := range folds {
		if f.Name == name {
			return !slices.EqualFunc(f.Shards, shards, samePath)
		}
	}
	return true
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// stageManifest writes the manifest of an index of shards under a
// temporary name; nil when the index needs none. The caller commits it
// once the index is in place, or aborts it.
func stageManifest(indexPath string, shards []string, sizes []int64) (*safefile.File, error) {
	if len(sizes) != len(shards) {
		sizes = nil
	}
	if !NeedsManifest(indexPath, shards) {
		return nil, nil
	}
	dir, err := filepath.Abs(filepath.Dir(indexPath))
	if err != nil {
		return nil, err
	}
	m := Manifest{Kind: manifestKind, Version: 1, Index: filepath.Base(indexPath)}
	for i, s := range shards {
		if remote.IsURL(s) {
			size, etag, ok := remote.Known(s)
			if !ok {
				// Not read by this run: asked by the default client,
				// for the index's caller gives no context here.
				var err error
				if size, etag, err = remote.DefaultClient().Stat(context.Background(), s); err != nil {
					return nil, err
				}
			}
			stored, err := remote.StoredURL(s, true) // never its user info
			if err != nil {
				return nil, err
			}
			m.Shards = append(m.Shards, ManifestShard{Path: stored, Size: size, ETag: etag})
			continue
		}
		var size int64
		if sizes != nil {
			size = sizes[i]
		} else {
			st, err := os.Stat(s)
			if err != nil {
				return nil, err
			}
			size = st.Size()
		}
		abs, err := filepath.Abs(s)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(dir, abs)
		if err != nil {
			rel = abs
		}
		m.Shards = append(m.Shards, ManifestShard{Path: filepath.ToSlash(rel), Size: size})
	}
	b, err := m.encode()
	if err != nil {
		return nil, err
	}
	f, err := safefile.Create(ManifestPath(indexPath))
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Abort()
		return nil, fmt.Errorf("writing %s: %w", ManifestPath(indexPath), err)
	}
	return f, nil
}

// encode writes the manifest as JSON, one shard a line, so that a
// person reads it and a diff shows what changed.
func (m *Manifest) encode() ([]byte, error) {
	head, err := json.Marshal(struct {
		Kind    string `json:"kind"`
		Version int    `json:"version"`
		Index   string `json:"index"`
	}{m.Kind, m.Version, m.Index})
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.Write(head[:len(head)-1])
	b.WriteString(`,"shards":[`)
	for i, sh := range m.Shards {
		line, err := json.Marshal(sh)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n ")
		b.Write(line)
	}
	b.WriteString("\n]}\n")
	return []byte(b.String()), nil
}

// commitManifest puts a staged manifest in place, or, for an index that
// needs none, removes a manifest an earlier index left there (it would
// name other shards).
func commitManifest(indexPath string, f *safefile.File) error {
	if f != nil {
		return f.CommitReplace()
	}
	if err := os.Remove(ManifestPath(indexPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// CheckManifest compares the fold's shards with what its manifest
// recorded when they were indexed: the size of each, and the ETag of a
// remote one (asked of every server at once). The first that differs is
// an ErrStale error naming it; a fold without a manifest passes.
func (f *Fold) CheckManifest(ctx context.Context) error {
	return checkManifest(ctx, f.Index.Path, f.Shards, f.Sizes, f.ETags)
}

func checkManifest(ctx context.Context, indexPath string, shards []string, sizes []int64, etags []string) error {
	if len(sizes) == 0 {
		return nil
	}
	n := min(len(shards), len(sizes))
	nowSizes, nowETags, errs := shardsNow(ctx, shards[:n])
	manifest := filepath.Base(ManifestPath(indexPath))
	for fid, p := range shards[:n] {
		if errs[fid] != nil {
			return errs[fid]
		}
		if nowSizes[fid] != sizes[fid] {
			return fmt.Errorf("%s: %d bytes, but %d when indexed (manifest %s): %w", p, nowSizes[fid], sizes[fid], manifest, ErrStale)
		}
		if fid < len(etags) && etags[fid] != "" && nowETags[fid] != etags[fid] {
			return fmt.Errorf("%s: ETag %s, but %s when indexed (manifest %s): %w", p, nowETags[fid], etags[fid], manifest, ErrStale)
		}
	}
	return nil
}
