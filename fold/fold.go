package fold

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/shardset"

	"github.com/itarconv/itarconv/internal/human"
)

// ErrNotFound: no row has the requested key and extension.
var ErrNotFound = errors.New("no such member in the index")

// ErrStale: the index does not match its shards any more.
var ErrStale = errors.New("index does not match its shards")

// ErrTruncated: a shard ends before the payload a row addresses (the shard
// was cut short after it was indexed). It is a kind of ErrStale.
var ErrTruncated = fmt.Errorf("shard ends inside the payload: %w", ErrStale)

// errNoShards: an index whose shards are neither named by a manifest nor
// beside it. It is an fs.ErrNotExist.
var errNoShards = fmt.Errorf("no shards found for the index: %w", fs.ErrNotExist)

// Fold is an index and the shards its fids address.
type Fold struct {
	Name string
	// Index is the index, in memory; nil for a fold of OpenAllRows,
	// whose rows stay in the file until Verify reads them.
	Index  *taridx.Index
	rows   *taridx.File
	Shards []string // paths, by fid
	// Sizes, from the index's manifest, are the shards' sizes when
	// indexed (nil without a manifest): Verify reports a shard whose size
	// changed.
	Sizes []int64
	// ETags, from the manifest too, are remote shards' ETags when indexed
	// ("" where none): every read of one sends it (If-Match).
	ETags []string
}

// Open opens the fold an index file belongs to. Without explicit shards the
// fold's shards are those its manifest names (ManifestPath), else the
// <fold>_<suffix>.tar files beside the index (glzn's rule), else the shards
// beside it that shardset.Discover groups into a fold of the index's name.
func Open(indexPath string, shards []string) (*Fold, error) {
	return open(indexPath, shards, false)
}

func open(indexPath string, shards []string, rowsInFile bool) (*Fold, error) {
	name := strings.TrimSuffix(filepath.Base(indexPath), ".taridx")
	f := &Fold{Name: name, Shards: shards}
	var err error
	if rowsInFile {
		f.rows, err = taridx.OpenFile(indexPath)
	} else {
		f.Index, err = taridx.ReadFile(indexPath)
	}
	if err != nil {
		return nil, err
	}
	if len(shards) > 0 {
		return f, nil
	}
	m, err := ReadManifest(indexPath)
	switch {
	case err == nil:
		f.Shards, f.Sizes, f.ETags = m.Paths(filepath.Dir(indexPath)), m.Sizes(), m.ETags()
		return f, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if f.Shards = besideIndex(filepath.Dir(indexPath), name); len(f.Shards) == 0 {
		return nil, fmt.Errorf("%s: no shards of fold %s beside the index, and no manifest %s naming them (for an index built from shards elsewhere, give them after the index): %w",
			indexPath, name, filepath.Base(ManifestPath(indexPath)), errNoShards)
	}
	return f, nil
}

// besideIndex finds a fold's tar shards in dir by their names.
func besideIndex(dir, name string) []string {
	if folds, err := taridx.Discover(dir); err == nil {
		for _, f := range folds {
			if f.Name == name {
				return f.Shards
			}
		}
	}
	folds, _ := shardset.Discover(dir)
	for _, f := range folds {
		if f.Name == name && allTar(f.Shards) {
			return f.Shards
		}
	}
	return nil
}

func allTar(paths []string) bool {
	for _, p := range paths {
		if _, sfx, _ := shardset.TrimSuffix(p); sfx != ".tar" {
			return false
		}
	}
	return true
}

// OpenAll opens the folds named by path: an index file, or a directory
// (every index in it, or only the fold named).
func OpenAll(path, foldName string, shards []string) ([]*Fold, error) {
	return openAll(path, foldName, shards, false)
}

// OpenAllRows is OpenAll for Verify: each index's header and tables are
// read, its rows left in the file, which Verify reads a range at a time,
// so that memory does not grow with the rows. Such a fold's Index is nil.
func OpenAllRows(path, foldName string, shards []string) ([]*Fold, error) {
	return openAll(path, foldName, shards, true)
}

func openAll(path, foldName string, shards []string, rowsInFile bool) ([]*Fold, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		f, err := open(path, shards, rowsInFile)
		if err != nil {
			return nil, err
		}
		return []*Fold{f}, nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return nil, err
	}
	var out []*Fold
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".taridx")
		if !ok || e.IsDir() || strings.HasPrefix(name, ".") || foldName != "" && name != foldName {
			continue
		}
		f, err := open(filepath.Join(path, e.Name()), nil, rowsInFile)
		if errors.Is(err, errNoShards) && foldName == "" {
			continue // an index whose fold is not here: as a directory of other folds
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		if foldName != "" {
			return nil, fmt.Errorf("%s: no indexed fold %q", path, foldName)
		}
		return nil, fmt.Errorf("%s: no indexed fold (run itarconv index first)", path)
	}
	return out, nil
}

// Member is a located payload.
type Member struct {
	Fold  *Fold
	Row   taridx.Row
	Index int // row number
	Shard string
}

// Lookup finds the rows of KEY.EXT: a file name whose stem and extension
// give the key and extension, as the index was keyed. A name with a
// directory ("a/k.jpg", as ls prints it) matches an index keyed by paths
// or, failing that, by basenames. It returns every row with that key and
// extension, in index order.
func (f *Fold) Lookup(name string) ([]Member, error) {
	modes := []taridx.StemMode{taridx.StemBasename}
	if strings.Contains(name, "/") {
		modes = []taridx.StemMode{taridx.StemPath, taridx.StemBasename}
	}
	for _, mode := range modes {
		out, err := f.lookup(name, mode)
		if err != nil || len(out) > 0 {
			return out, err
		}
	}
	return nil, fmt.Errorf("%s: %s: %w", f.Index.Path, human.Name(name), ErrNotFound)
}

func (f *Fold) lookup(name string, mode taridx.StemMode) ([]Member, error) {
	stem, ext := taridx.SplitName(name, mode)
	extID := f.Index.ExtID(ext)
	if extID < 0 {
		return nil, nil
	}
	var crashID uint32
	for i, s := range f.Index.CrashStems {
		if s == stem {
			crashID = uint32(i + 1)
		}
	}
	key := taridx.Key{Hash: taridx.KeyHash(stem), CrashID: crashID}
	var out []Member
	for i, n := 0, f.Index.Len(); i < n; i++ {
		r := f.Index.Row(i)
		if r.KeyHash == key.Hash && r.CrashID == key.CrashID && int(r.ExtID) == extID {
			if int(r.Fid) >= len(f.Shards) {
				return nil, fmt.Errorf("%s: row %d: fid %d, but the fold has %d shards: %w", f.Index.Path, i, r.Fid, len(f.Shards), ErrStale)
			}
			out = append(out, Member{Fold: f, Row: r, Index: i, Shard: f.Shards[r.Fid]})
		}
	}
	return out, nil
}

// Copy writes a member's payload to w: one read of its header, to check
// that the index still describes it (a header at the offset, of the indexed
// size, whose name gives the row's key and extension), then the payload.
// When the header's own name field cannot tell (a long name kept in a pax or
// GNU header before it), the shard's headers are scanned to read the full
// name.
func (f *Fold) Copy(ctx context.Context, w io.Writer, m Member) (int64, error) {
	sh, err := f.openData(ctx, int(m.Row.Fid), m.Shard)
	if err != nil {
		return 0, err
	}
	defer sh.Close()
	var src io.ReaderAt = sh
	if r, ok := sh.(*remote.File); ok {
		// One request for the header and the payload after it.
		span := int64(m.Row.DataOffset()+m.Row.Size) - int64(m.Row.Offset)
		seq := r.Range(int64(m.Row.Offset), span)
		defer seq.Close()
		src = seq
	}
	var hdr [tarfile.BlockSize]byte
	if _, err := src.ReadAt(hdr[:], int64(m.Row.Offset)); err != nil {
		return 0, fmt.Errorf("%s: offset %d: reading header: %v: %w", m.Shard, m.Row.Offset, err, ErrStale)
	}
	stale := func(format string, args ...any) error {
		return fmt.Errorf("%s: offset %d: row %d: %s: %w", m.Shard, m.Row.Offset, m.Index, fmt.Sprintf(format, args...), ErrStale)
	}
	b, err := tarfile.ParseBlock(hdr[:])
	if err != nil {
		return 0, stale("%v", err)
	}
	ext := f.Index.Exts[m.Row.ExtID]
	// A size field of 0 may stand for a pax size record (members past
	// 8 GiB); the member scan below settles it.
	if uint64(b.Size) != m.Row.Size && b.Size != 0 {
		return 0, stale("the header has size %d, the index %d", b.Size, m.Row.Size)
	}
	if uint64(b.Size) != m.Row.Size || !keyMatches(taridx.DecodeName(b.NameField), m.Row, ext) {
		v, err := memberAt(ctx, m.Shard, m.Row.Offset)
		if err != nil {
			return 0, stale("%v", err)
		}
		if v == nil || uint64(v.Size) != m.Row.Size || !keyMatches(taridx.DecodeName(v.Name), m.Row, ext) {
			return 0, stale("the member there is not %s.%s of %d bytes", "the indexed key", ext, m.Row.Size)
		}
	}
	// Nothing is written unless the whole payload is there: a consumer of
	// the output cannot tell a short copy from the member's bytes.
	if end := m.Row.DataOffset() + m.Row.Size; uint64(sh.Size()) < end {
		return 0, fmt.Errorf("%s: offset %d: row %d: the payload of %d bytes needs the shard to hold %d bytes, it holds %d: %w",
			m.Shard, m.Row.Offset, m.Index, m.Row.Size, end, sh.Size(), ErrTruncated)
	}
	n, err := io.Copy(w, io.NewSectionReader(src, int64(m.Row.DataOffset()), int64(m.Row.Size)))
	if err == nil && n != int64(m.Row.Size) {
		err = stale("payload of %d bytes ends after %d", m.Row.Size, n)
	}
	return n, err
}

// keyMatches reports whether a member name gives the row's key hash and
// extension, with either stem rule.
func keyMatches(name string, r taridx.Row, ext string) bool {
	for _, mode := range []taridx.StemMode{taridx.StemBasename, taridx.StemPath} {
		stem, e := taridx.SplitName(name, mode)
		if e == ext && taridx.KeyHash(stem) == r.KeyHash {
			return true
		}
	}
	return false
}

// memberAt scans a shard's headers for the member whose own header is at
// off (concatenated archives included).
func memberAt(ctx context.Context, path string, off uint64) (*tarfile.Member, error) {
	s, err := openScan(ctx, path, tarfile.Options{IgnoreZeros: true})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	for {
		m, err := s.Next()
		if err == io.EOF {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if uint64(m.HeaderOffset) == off {
			return m, nil
		}
		if uint64(m.HeaderOffset) > off {
			return nil, nil
		}
	}
}
