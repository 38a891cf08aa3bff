package fold

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tarscan"
)

// headerView is what a shard holds at one header offset: the member whose
// own header it is (full name) and the block's own fields (100-byte name).
type headerView struct {
	member    bool // a member's own header (not a pax, long-name or sparse block)
	regular   bool
	name      string // full name when member, else the block's name field
	field     string // the block's name field
	size      int64  // payload size (member) or size field (block)
	fieldSize int64  // the block's size field
	typ       byte
}

// scanShard maps every header offset of a shard to what stands there, from
// two header-only passes: members with full names, and raw header blocks.
// Rows past the end-of-archive marker (up to maxOff) mean the index was
// built from concatenated archives: the shard is then read past zero
// blocks, as the index was.
func scanShard(path string, opts tarscan.Options, maxOff uint64) (map[uint64]*headerView, error) {
	views := make(map[uint64]*headerView)
	f, err := tarscan.Open(path, tarscan.Options{IgnoreZeros: opts.IgnoreZeros, Strategy: opts.Strategy})
	if err != nil {
		return nil, err
	}
	for {
		m, err := f.Next()
		if err == io.EOF {
			if !opts.IgnoreZeros && maxOff >= uint64(f.Offset()) {
				f.Close()
				opts.IgnoreZeros = true
				return scanShard(path, opts, maxOff)
			}
			break
		}
		if err != nil {
			f.Close()
			return nil, err
		}
		views[uint64(m.HeaderOffset)] = &headerView{member: true, regular: m.IsRegular(), name: taridx.DecodeName(m.Name), size: m.Size, typ: m.Typeflag}
	}
	f.Close()
	b, err := tarscan.Open(path, tarscan.Options{IgnoreZeros: opts.IgnoreZeros, Strategy: opts.Strategy, HeaderBlocks: true})
	if err != nil {
		return nil, err
	}
	defer b.Close()
	for {
		m, err := b.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			// The block walk follows size fields blindly (as glzn does) and
			// may derail where the member walk did not; what it saw before
			// still stands.
			break
		}
		off := uint64(m.HeaderOffset)
		v := views[off]
		if v == nil {
			v = &headerView{typ: m.Typeflag, size: m.Size}
			views[off] = v
		}
		v.field, v.fieldSize = taridx.DecodeName(m.Name), m.Size
	}
	return views, nil
}

// Problem is one way an index disagrees with its shards.
type Problem struct {
	Shard  string `json:"shard"`
	Fid    int    `json:"fid"`
	Row    int    `json:"row"` // -1 for a problem of the whole shard
	Offset uint64 `json:"offset"`
	What   string `json:"what"`
}

func (p Problem) String() string {
	if p.Row < 0 {
		return fmt.Sprintf("%s (fid %d): %s", p.Shard, p.Fid, p.What)
	}
	return fmt.Sprintf("%s (fid %d) row %d, offset %d: %s", p.Shard, p.Fid, p.Row, p.Offset, p.What)
}

// Report is the outcome of Verify.
type Report struct {
	Fold      string    `json:"fold"`
	Index     string    `json:"index"`
	Rows      int       `json:"rows"`
	Shards    int       `json:"shards"`
	DataBytes int64     `json:"data_bytes_read"`
	Problems  []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// VerifyOptions tune Verify.
type VerifyOptions struct {
	Data    bool // also read every payload
	Workers int
	Scan    tarscan.Options
}

// rowMatches tells whether the header at a row's offset still is the
// member the row indexes: same size, and a name whose stem hashes to the
// row's key with the row's extension. Rows of a default index point at
// regular members (full names, basename or path stems); rows of a glzn
// compatible index may point at any header block (100-byte name field).
func rowMatches(v *headerView, r taridx.Row, ext string) string {
	if v == nil {
		return "no tar header starts at this offset"
	}
	nameOK := func(name string) bool { return keyMatches(name, r, ext) }
	if v.member && v.regular && uint64(v.size) == r.Size && nameOK(v.name) {
		return ""
	}
	if v.field != "" || v.fieldSize != 0 {
		if uint64(v.fieldSize) == r.Size && nameOK(v.field) {
			return ""
		}
	}
	switch {
	case v.member && uint64(v.size) != r.Size:
		return fmt.Sprintf("size %d in the index, %d in the tar header", r.Size, v.size)
	case v.member && !v.regular && uint64(v.fieldSize) != r.Size:
		return fmt.Sprintf("member %q has type %q, not a regular file", v.name, v.typ)
	case v.member:
		return fmt.Sprintf("member is named %q, which does not match the row's key and extension %q", v.name, ext)
	}
	return fmt.Sprintf("header block %q (size %d) does not match the row", v.field, v.fieldSize)
}

// Verify checks every row of the fold against the tar header at its offset
// (and, with Data, that every payload can be read whole).
func (f *Fold) Verify(ctx context.Context, opts VerifyOptions) (*Report, error) {
	rep := &Report{Fold: f.Name, Index: f.Index.Path, Rows: f.Index.Len(), Shards: len(f.Shards)}
	byFid := make(map[int][]int)
	for i, n := 0, f.Index.Len(); i < n; i++ {
		fid := int(f.Index.Row(i).Fid)
		byFid[fid] = append(byFid[fid], i)
	}
	var fids []int
	for fid := range byFid {
		fids = append(fids, fid)
	}
	sort.Ints(fids)

	workers := opts.Workers
	if workers <= 0 {
		workers = 2
	}
	problems := make([][]Problem, len(fids))
	dataBytes := make([]int64, len(fids))
	errs := make([]error, len(fids))
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for k, fid := range fids {
		if fid >= len(f.Shards) {
			for _, i := range byFid[fid] {
				problems[k] = append(problems[k], Problem{Shard: "(missing)", Fid: fid, Row: i, Offset: f.Index.Row(i).Offset,
					What: fmt.Sprintf("fid %d, but the fold has %d shards", fid, len(f.Shards))})
			}
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if ctx.Err() != nil {
				errs[k] = ctx.Err()
				return
			}
			problems[k], dataBytes[k], errs[k] = f.verifyShard(fid, byFid[fid], opts)
		}()
	}
	wg.Wait()
	for k := range fids {
		if errs[k] != nil {
			return nil, errs[k]
		}
		rep.Problems = append(rep.Problems, problems[k]...)
		rep.DataBytes += dataBytes[k]
	}
	return rep, nil
}

func (f *Fold) verifyShard(fid int, rows []int, opts VerifyOptions) ([]Problem, int64, error) {
	path := f.Shards[fid]
	base := filepath.Base(path)
	var maxOff uint64
	for _, i := range rows {
		maxOff = max(maxOff, f.Index.Row(i).Offset)
	}
	views, err := scanShard(path, opts.Scan, maxOff)
	if err != nil {
		return []Problem{{Shard: base, Fid: fid, Row: -1, What: err.Error()}}, 0, nil
	}
	var probs []Problem
	for _, i := range rows {
		r := f.Index.Row(i)
		if what := rowMatches(views[r.Offset], r, f.Index.Exts[r.ExtID]); what != "" {
			probs = append(probs, Problem{Shard: base, Fid: fid, Row: i, Offset: r.Offset, What: what})
		}
	}
	if !opts.Data || len(probs) > 0 {
		return probs, 0, nil
	}
	// Read every payload, in file order, to prove the bytes are there.
	sh, err := os.Open(path)
	if err != nil {
		return append(probs, Problem{Shard: base, Fid: fid, Row: -1, What: err.Error()}), 0, nil
	}
	defer sh.Close()
	sorted := append([]int(nil), rows...)
	sort.Slice(sorted, func(a, b int) bool { return f.Index.Row(sorted[a]).Offset < f.Index.Row(sorted[b]).Offset })
	var total int64
	buf := make([]byte, 1<<20)
	for _, i := range sorted {
		r := f.Index.Row(i)
		n, err := io.CopyBuffer(io.Discard, io.NewSectionReader(sh, int64(r.DataOffset()), int64(r.Size)), buf)
		total += n
		if err != nil || uint64(n) != r.Size {
			probs = append(probs, Problem{Shard: base, Fid: fid, Row: i, Offset: r.Offset,
				What: fmt.Sprintf("payload of %d bytes: read %d (%v)", r.Size, n, err)})
		}
	}
	return probs, total, nil
}

// Entry is one row as List shows it.
type Entry struct {
	Row    int    `json:"row"`
	Shard  string `json:"shard"`
	Fid    int    `json:"fid"`
	Offset uint64 `json:"offset"`
	Size   uint64 `json:"size"`
	Name   string `json:"name"` // read back from the tar headers
}

// List calls fn for every row, in index order, with the name that the tar
// headers at its offset hold. Each shard's headers are read once; only the
// shard being listed is held in memory when rows come in shard order (as
// they do unless the index was made contiguous).
func (f *Fold) List(opts tarscan.Options, fn func(Entry) error) error {
	n := f.Index.Len()
	maxOff := make(map[int]uint64)
	inOrder := true
	for i := 0; i < n; i++ {
		r := f.Index.Row(i)
		if i > 0 && r.Fid < f.Index.Row(i-1).Fid {
			inOrder = false
		}
		maxOff[int(r.Fid)] = max(maxOff[int(r.Fid)], r.Offset)
	}
	cache := make(map[int]map[uint64]*headerView)
	for i := 0; i < n; i++ {
		r := f.Index.Row(i)
		fid := int(r.Fid)
		if fid >= len(f.Shards) {
			return fmt.Errorf("%s: row %d: fid %d, but the fold has %d shards: %w", f.Index.Path, i, fid, len(f.Shards), ErrStale)
		}
		views, ok := cache[fid]
		if !ok {
			if inOrder {
				clear(cache)
			}
			var err error
			if views, err = scanShard(f.Shards[fid], opts, maxOff[fid]); err != nil {
				return err
			}
			cache[fid] = views
		}
		e := Entry{Row: i, Shard: filepath.Base(f.Shards[fid]), Fid: fid, Offset: r.Offset, Size: r.Size}
		switch v := views[r.Offset]; {
		case v == nil:
			return fmt.Errorf("%s: offset %d: no tar header for row %d: %w", f.Shards[fid], r.Offset, i, ErrStale)
		case v.member:
			e.Name = v.name
		default:
			e.Name = v.field
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}
