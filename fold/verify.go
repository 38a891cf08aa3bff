package fold

import (
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/remote"

	"github.com/itarconv/itarconv/internal/human"
)

// Kinds of Problem.
const (
	// ProblemRow: a row no longer matches what stands at its offset, or
	// points past its shard or at a shard the fold lacks.
	ProblemRow = "row"
	// ProblemExtraMember: the shard holds a member (or, for an index in
	// glzn's mode, a header block) that no row indexes, such as one
	// appended with tar rf after indexing.
	ProblemExtraMember = "extra member"
	// ProblemExtraShard: a shard of the fold past the last one the index
	// addresses holds members no row indexes (a stale shard of an earlier,
	// larger fold).
	ProblemExtraShard = "extra shard"
	// ProblemShard: a shard cannot be read as a tar archive.
	ProblemShard = "shard"
	// ProblemShardSize: a shard's size is not the one the index's manifest
	// recorded: it changed after indexing.
	ProblemShardSize = "shard size"
)

// Problem is one way an index disagrees with its shards.
type Problem struct {
	Kind   string `json:"kind"`
	Shard  string `json:"shard"`
	Fid    int    `json:"fid"`
	Row    int    `json:"row"` // -1 for a problem that is not a row's
	Offset uint64 `json:"offset"`
	What   string `json:"what"`
}

func (p Problem) String() string {
	switch {
	case p.Kind == ProblemExtraMember:
		return fmt.Sprintf("%s (fid %d) offset %d: %s", p.Shard, p.Fid, p.Offset, p.What)
	case p.Row < 0:
		return fmt.Sprintf("%s (fid %d): %s", p.Shard, p.Fid, p.What)
	}
	return fmt.Sprintf("%s (fid %d) row %d, offset %d: %s", p.Shard, p.Fid, p.Row, p.Offset, p.What)
}

// Report is the outcome of Verify.
type Report struct {
	Fold      string `json:"fold"`
	Index     string `json:"index"`
	Rows      int    `json:"rows"`
	Shards    int    `json:"shards"`
	DataBytes int64  `json:"data_bytes_read"`
	// Compat: the index has rows only glzn's mode makes (directories,
	// pax blocks, names without an extension): every header block must
	// then have a row, not only every regular member.
	Compat bool `json:"compat"`
	// ExtraMembers counts the members (header blocks, Compat) that the
	// shards hold and the index lacks; ExtraShards the shards past the
	// index's last that hold some.
	ExtraMembers int64     `json:"extra_members"`
	ExtraShards  int       `json:"extra_shards"`
	Problems     []Problem `json:"problems"`
}

// OK reports whether no problem was found.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// VerifyOptions tune Verify.
type VerifyOptions struct {
	Data    bool // also read every payload
	Workers int
	Scan    tarfile.Options
}

// rowMatches tells whether the header at a row's offset still is the
// member the row indexes: same size, and a name whose stem hashes to the
// row's key with the row's extension. Rows of a default index point at
// regular members (full names, basename or path stems); rows of a glzn
// compatible index may point at any header block (100-byte name field).
// byDefault tells whether the default mode would make this row too.
func rowMatches(v *headerView, r taridx.Row, ext string) (what string, byDefault bool) {
	if v == nil {
		return "no tar header starts at this offset", false
	}
	nameOK := func(name string) bool { return keyMatches(name, r, ext) }
	if v.member && v.regular && uint64(v.size) == r.Size && nameOK(v.name) {
		return "", taridx.JudgeExt(ext) == taridx.ExtUsable
	}
	if v.block {
		if uint64(v.fieldSize) == r.Size && nameOK(v.field) {
			return "", false
		}
	}
	switch {
	case v.member && uint64(v.size) != r.Size:
		return fmt.Sprintf("size %d in the index, %d in the tar header", r.Size, v.size), false
	case v.member && !v.regular && uint64(v.fieldSize) != r.Size:
		return fmt.Sprintf("member %s has type %q, not a regular file", human.Name(v.name), v.typ), false
	case v.member:
		return fmt.Sprintf("member is named %s, which does not match the row's key and extension %q", human.Name(v.name), ext), false
	}
	return fmt.Sprintf("header block %s (size %d) does not match the row", human.Name(v.field), v.fieldSize), false
}

// byShard groups the index's rows by fid, each group sorted by offset (row
// number among equals): rows[start[fid]:start[fid+1]] are fid's. Four bytes
// a row, whatever the index's order.
func (f *Fold) byShard(nShards int) (rows []uint32, start []int) {
	x := f.Index
	n := x.Len()
	start = make([]int, nShards+2)
	for i := 0; i < n; i++ {
		start[min(int(x.Row(i).Fid), nShards)+1]++
	}
	for s := 1; s < len(start); s++ {
		start[s] += start[s-1]
	}
	next := append([]int(nil), start...)
	rows = make([]uint32, n)
	for i := 0; i < n; i++ {
		s := min(int(x.Row(i).Fid), nShards)
		rows[next[s]] = uint32(i)
		next[s]++
	}
	// Sort each shard's rows on offsets decoded once, in a buffer the size
	// of the largest shard's rows: comparing rows decoded from the index
	// would read it at random, twice a comparison.
	type keyed struct {
		off uint64
		row uint32
	}
	var buf []keyed
	for s := 0; s < nShards; s++ {
		seg := rows[start[s]:start[s+1]]
		buf = buf[:0]
		for _, i := range seg {
			buf = append(buf, keyed{x.Row(int(i)).Offset, i})
		}
		slices.SortFunc(buf, func(a, b keyed) int {
			if c := cmp.Compare(a.off, b.off); c != 0 {
				return c
			}
			return cmp.Compare(a.row, b.row)
		})
		for k := range buf {
			seg[k] = buf[k].row
		}
	}
	return rows, start
}

// maxListedExtras bounds the extra members a shard's report names one by
// one; the counts are whole.
const maxListedExtras = 20

// extraHeader is a header no row indexes.
type extraHeader struct {
	off  uint64
	name string
	size int64
}

// shardCheck is what verifying one shard found.
type shardCheck struct {
	probs  []Problem
	data   int64
	compat bool // a row only glzn's mode makes
	// Headers no row indexes: regular members with a usable extension
	// (default mode), and header blocks (glzn's mode).
	members, blocks   []extraHeader
	nMembers, nBlocks int64
}

// Verify checks every row of the fold against the tar header at its offset
// (and, with Data, that every payload can be read whole), and that the
// index covers exactly what the shards hold: every regular member with a
// usable extension (every header block, for an index in glzn's mode), in
// every shard of the fold. Each shard is read once, in offset order, merged
// with its rows sorted by offset: memory grows with the index, not with
// the shards' headers.
func (f *Fold) Verify(ctx context.Context, opts VerifyOptions) (*Report, error) {
	if f.Index == nil {
		rep, err := f.verifyRows(ctx, opts)
		if !errors.Is(err, errOutOfOrder) {
			return rep, err
		}
		// Rows not in shard and offset order (a --contiguous index):
		// grouped by shard in memory.
		if f.Index, err = taridx.ReadFile(f.rows.Path); err != nil {
			return nil, err
		}
	}
	nShards := len(f.Shards)
	rows, start := f.byShard(nShards)
	lastFid := -1
	for i := 0; i < len(rows); i++ {
		lastFid = max(lastFid, int(f.Index.Row(i).Fid))
	}
	rep, err := f.verifyShards(ctx, opts, func(fid int) shardRows {
		return memRows{f.Index, rows[start[fid]:start[fid+1]]}
	}, lastFid)
	if err != nil {
		return nil, err
	}
	// Rows of shards the fold lacks.
	for _, i := range rows[start[nShards]:] {
		rep.Problems = append(rep.Problems, missingShard(f.Index.Row(int(i)), int(i), nShards))
	}
	return rep, nil
}

// errOutOfOrder: the rows of an index in its file are not in shard and
// offset order, so that a shard's rows are not one range of them.
var errOutOfOrder = errors.New("rows not in shard and offset order")

// verifyRows is Verify over an index whose rows stay in the file: when
// they come in shard and offset order (as an index that was not made
// --contiguous has them), each shard's rows are a range, found by binary
// search, which its worker reads a buffer at a time.
func (f *Fold) verifyRows(ctx context.Context, opts VerifyOptions) (*Report, error) {
	x := f.rows
	nShards := len(f.Shards)
	one := make([]taridx.Row, 1)
	var searchErr error
	fidAt := func(i int) int {
		if _, err := x.ReadRows(i, one, nil); err != nil && searchErr == nil {
			searchErr = err
		}
		return int(one[0].Fid)
	}
	start := make([]int, nShards+2)
	for s := 0; s <= nShards; s++ {
		start[s] = sort.Search(x.Len(), func(i int) bool { return fidAt(i) >= s })
	}
	start[nShards+1] = x.Len()
	if searchErr != nil {
		return nil, searchErr
	}
	lastFid := -1
	if x.Len() > 0 {
		lastFid = fidAt(x.Len() - 1)
	}
	rep, err := f.verifyShards(ctx, opts, func(fid int) shardRows {
		return &fileRows{x: x, fid: fid, lo: start[fid], n: start[fid+1] - start[fid]}
	}, lastFid)
	if err != nil {
		return nil, err
	}
	// Rows of shards the fold lacks.
	rest := &fileRows{x: x, fid: -1, lo: start[nShards], n: x.Len() - start[nShards]}
	for k := range rest.n {
		r, i, err := rest.row(k)
		if err != nil {
			return nil, err
		}
		if int(r.Fid) < nShards {
			return nil, errOutOfOrder
		}
		rep.Problems = append(rep.Problems, missingShard(r, i, nShards))
	}
	return rep, nil
}

func missingShard(r taridx.Row, i, nShards int) Problem {
	return Problem{Kind: ProblemRow, Shard: "(missing)", Fid: int(r.Fid), Row: i, Offset: r.Offset,
		What: fmt.Sprintf("fid %d, but the fold has %d shards", r.Fid, nShards)}
}

// shardRows are the rows of one shard, in offset order (row number among
// equals).
type shardRows interface {
	len() int
	// row returns the k-th row and its number in the index.
	row(k int) (taridx.Row, int, error)
}

// memRows are a shard's rows in an index in memory, by number.
type memRows struct {
	x    *taridx.Index
	rows []uint32
}

func (m memRows) len() int { return len(m.rows) }
func (m memRows) row(k int) (taridx.Row, int, error) {
	return m.x.Row(int(m.rows[k])), int(m.rows[k]), nil
}

// fileRows are a range of an index's rows in its file (lo, n rows), read
// a buffer at a time, and checked to be fid's (unless fid < 0) and in
// offset order as they are read in order.
type fileRows struct {
	x      *taridx.File
	fid    int
	lo, n  int
	buf    []taridx.Row
	raw    []byte
	at     int // the row buf[0] is
	next   int // rows before next are checked
	lastOf uint64
}

func (r *fileRows) len() int { return r.n }

func (r *fileRows) row(k int) (taridx.Row, int, error) {
	if k < r.at || k >= r.at+len(r.buf) {
		if err := r.load(k); err != nil {
			return taridx.Row{}, 0, err
		}
	}
	return r.buf[k-r.at], r.lo + k, nil
}

func (r *fileRows) load(k int) error {
	if r.buf == nil {
		r.buf = make([]taridx.Row, 4096)
	}
	n, err := r.x.ReadRows(r.lo+k, r.buf[:cap(r.buf)], r.raw)
	if err != nil {
		return err
	}
	r.buf, r.at = r.buf[:min(n, r.n-k)], k
	if k > r.next {
		return nil // checked when read in order
	}
	for j := r.next - k; j < len(r.buf); j++ {
		row := r.buf[j]
		if r.fid >= 0 && (int(row.Fid) != r.fid || row.Offset < r.lastOf) {
			return errOutOfOrder
		}
		r.lastOf = row.Offset
	}
	r.next = max(r.next, k+len(r.buf))
	return nil
}

// checkAll reads the rows not read in order yet.
func (r *fileRows) checkAll() error {
	for r.next < r.n {
		if err := r.load(r.next); err != nil {
			return err
		}
	}
	return nil
}

// verifyShards checks each shard against its rows on opts.Workers
// workers, then the shards' sizes against the manifest, and reports.
// lastFid is the largest fid of a row.
func (f *Fold) verifyShards(ctx context.Context, opts VerifyOptions, rowsOf func(fid int) shardRows, lastFid int) (*Report, error) {
	indexPath, nRows := f.indexPath()
	rep := &Report{Fold: f.Name, Index: indexPath, Rows: nRows, Shards: len(f.Shards)}
	nShards := len(f.Shards)
	workers := opts.Workers
	if workers <= 0 {
		workers = 2
	}
	checks := make([]shardCheck, nShards)
	errs := make([]error, nShards)
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for fid := 0; fid < nShards; fid++ {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := ctx.Err(); err != nil {
				errs[fid] = err
				return
			}
			checks[fid], errs[fid] = f.verifyShard(ctx, fid, rowsOf(fid), opts)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		if errors.Is(err, errOutOfOrder) {
			return nil, errOutOfOrder
		}
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
	}
	for _, c := range checks {
		rep.Compat = rep.Compat || c.compat
	}
	nowSizes, nowETags, nowErrs := shardsNow(ctx, f.Shards[:min(nShards, len(f.Sizes))])
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for fid, want := range f.Sizes {
		if fid >= nShards {
			break
		}
		size, etag, err := nowSizes[fid], nowETags[fid], nowErrs[fid]
		if err == nil && size != want {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemShardSize, Shard: filepath.Base(f.Shards[fid]), Fid: fid, Row: -1,
				What: fmt.Sprintf("%d bytes, but %d when indexed (manifest %s)", size, want, filepath.Base(ManifestPath(indexPath)))})
		} else if err == nil && fid < len(f.ETags) && f.ETags[fid] != "" && etag != f.ETags[fid] {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemShardSize, Shard: filepath.Base(f.Shards[fid]), Fid: fid, Row: -1,
				What: fmt.Sprintf("ETag %s, but %s when indexed (manifest %s)", etag, f.ETags[fid], filepath.Base(ManifestPath(indexPath)))})
		}
	}
	for fid, c := range checks {
		rep.Problems = append(rep.Problems, c.probs...)
		rep.DataBytes += c.data
		extras, n := c.members, c.nMembers
		if rep.Compat {
			extras, n = c.blocks, c.nBlocks
		}
		if n == 0 {
			continue
		}
		rep.ExtraMembers += n
		base := filepath.Base(f.Shards[fid])
		if fid > lastFid {
			rep.ExtraShards++
			what := fmt.Sprintf("a shard of the fold that the index does not cover (its last shard is fid %d): %d members, the first %s", lastFid, n, human.Name(extras[0].name))
			if lastFid < 0 {
				what = fmt.Sprintf("a shard of the fold that the index does not cover (it has no rows): %d members, the first %s", n, human.Name(extras[0].name))
			}
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemExtraShard, Shard: base, Fid: fid, Row: -1, What: what})
			continue
		}
		for _, e := range extras {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemExtraMember, Shard: base, Fid: fid, Row: -1, Offset: e.off,
				What: fmt.Sprintf("member %s (%d bytes) is not in the index", human.Name(e.name), e.size)})
		}
		if more := n - int64(len(extras)); more > 0 {
			rep.Problems = append(rep.Problems, Problem{Kind: ProblemExtraMember, Shard: base, Fid: fid, Row: -1, Offset: extras[len(extras)-1].off,
				What: fmt.Sprintf("and %d more members after this one that are not in the index", more)})
		}
	}
	return rep, nil
}

// indexPath is the index's path, and its number of rows.
func (f *Fold) indexPath() (string, int) {
	if f.Index != nil {
		return f.Index.Path, f.Index.Len()
	}
	return f.rows.Path, f.rows.Len()
}

// verifyShard checks shard fid against its rows. A shard that cannot be
// read is a Problem; an error is the index's (unreadable, or its rows
// out of order).
func (f *Fold) verifyShard(ctx context.Context, fid int, rows shardRows, opts VerifyOptions) (shardCheck, error) {
	path := f.Shards[fid]
	base := filepath.Base(path)
	exts := f.exts()
	var c shardCheck
	var fatal error
	at := func(k int, v *headerView) error {
		r, i, err := rows.row(k)
		if err != nil {
			fatal = err
			return err
		}
		what, byDefault := rowMatches(v, r, exts[r.ExtID])
		if what != "" {
			c.probs = append(c.probs, Problem{Kind: ProblemRow, Shard: base, Fid: fid, Row: i, Offset: r.Offset, What: what})
		} else if !byDefault {
			c.compat = true
		}
		return nil
	}
	extra := func(off uint64, v *headerView) {
		if v.member && v.regular {
			if _, ext := taridx.SplitName(v.name, taridx.StemBasename); taridx.JudgeExt(ext) == taridx.ExtUsable {
				c.nMembers++
				if len(c.members) < maxListedExtras {
					c.members = append(c.members, extraHeader{off, v.name, v.size})
				}
			}
		}
		if v.block {
			c.nBlocks++
			if len(c.blocks) < maxListedExtras {
				c.blocks = append(c.blocks, extraHeader{off, v.field, v.fieldSize})
			}
		}
	}
	rowOff := func(k int) uint64 {
		r, _, err := rows.row(k)
		if err != nil && fatal == nil {
			fatal = err
		}
		return r.Offset
	}
	err := walkShard(ctx, path, opts.Scan, rows.len(), rowOff, at, extra)
	if fatal != nil {
		return c, fatal
	}
	if fr, ok := rows.(*fileRows); ok {
		if err := fr.checkAll(); err != nil {
			return c, err
		}
	}
	if err != nil {
		c.probs = append(c.probs, Problem{Kind: ProblemShard, Shard: base, Fid: fid, Row: -1, What: err.Error()})
		return c, nil
	}
	if !opts.Data || len(c.probs) > 0 {
		return c, nil
	}
	// Read every payload, in file order, to prove the bytes are there.
	sh, err := f.openData(ctx, fid, path)
	if err != nil {
		c.probs = append(c.probs, Problem{Kind: ProblemShard, Shard: base, Fid: fid, Row: -1, What: err.Error()})
		return c, nil
	}
	defer sh.Close()
	var data io.ReaderAt = sh
	if r, ok := sh.(*remote.File); ok {
		// Every payload, in file order: streamed, reading through what
		// lies between them when that is cheaper than a request.
		seq := r.Sequential(true)
		defer seq.Close()
		data = seq
	}
	win := &window{r: data, buf: make([]byte, 1<<20)}
	for k := range rows.len() {
		r, i, err := rows.row(k)
		if err != nil {
			return c, err
		}
		n, err := win.read(int64(r.DataOffset()), int64(r.Size))
		c.data += n
		if err != nil || uint64(n) != r.Size {
			c.probs = append(c.probs, Problem{Kind: ProblemRow, Shard: base, Fid: fid, Row: i, Offset: r.Offset,
				What: fmt.Sprintf("payload of %d bytes: read %d (%v)", r.Size, n, err)})
		}
	}
	return c, nil
}

// window reads payloads in offset order a buffer at a time: small
// payloads, one after another, cost one read a buffer, not one a payload.
type window struct {
	r   io.ReaderAt
	buf []byte
	at  int64 // the offset buf[:n] holds
	n   int64
	err error // how the read that filled it ended
}

// read reads the size bytes at off, and returns how many it could.
func (w *window) read(off, size int64) (int64, error) {
	if size > int64(len(w.buf)) {
		w.n = 0 // the buffer is the copy's
		return io.CopyBuffer(io.Discard, io.NewSectionReader(w.r, off, size), w.buf)
	}
	if off < w.at || off+size > w.at+w.n {
		n, err := w.r.ReadAt(w.buf, off)
		w.at, w.n, w.err = off, int64(n), err
	}
	if got := w.at + w.n - off; got < size {
		err := w.err
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return max(got, 0), err
	}
	return size, nil
}

// exts is the index's extension table.
func (f *Fold) exts() []string {
	if f.Index != nil {
		return f.Index.Exts
	}
	return f.rows.Exts
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
// headers at its offset hold. When rows come in shard order and, within a
// shard, in offset order (as an index of the default mode that was not made
// contiguous has them), each shard is read once as the rows are listed,
// holding nothing. Otherwise every row's name is first gathered, shard by
// shard, into memory (the names, and 4 bytes a row).
func (f *Fold) List(ctx context.Context, opts tarfile.Options, fn func(Entry) error) error {
	x := f.Index
	n := x.Len()
	inOrder := true
	for i := 0; i < n; i++ {
		r := x.Row(i)
		if int(r.Fid) >= len(f.Shards) {
			return fmt.Errorf("%s: row %d: fid %d, but the fold has %d shards: %w", x.Path, i, r.Fid, len(f.Shards), ErrStale)
		}
		if i > 0 {
			p := x.Row(i - 1)
			if r.Fid < p.Fid || (r.Fid == p.Fid && r.Offset < p.Offset) {
				inOrder = false
			}
		}
	}
	name := func(i int, v *headerView) (string, error) {
		r := x.Row(i)
		switch {
		case v == nil:
			return "", fmt.Errorf("%s: offset %d: no tar header for row %d: %w", f.Shards[r.Fid], r.Offset, i, ErrStale)
		case v.member:
			return v.name, nil
		}
		return v.field, nil
	}
	emit := func(i int, nm string) error {
		r := x.Row(i)
		return fn(Entry{Row: i, Shard: filepath.Base(f.Shards[r.Fid]), Fid: int(r.Fid), Offset: r.Offset, Size: r.Size, Name: nm})
	}
	if inOrder {
		for i := 0; i < n; {
			fid := x.Row(i).Fid
			j := i
			for j < n && x.Row(j).Fid == fid {
				j++
			}
			first := i
			err := walkShard(ctx, f.Shards[fid], opts, j-i, func(k int) uint64 { return x.Row(first + k).Offset },
				func(k int, v *headerView) error {
					nm, err := name(first+k, v)
					if err != nil {
						return err
					}
					return emit(first+k, nm)
				}, nil)
			if err != nil {
				return err
			}
			i = j
		}
		return nil
	}
	rows, start := f.byShard(len(f.Shards))
	var names nameArena
	where := make([]uint32, n) // each row's name in names
	for fid := range f.Shards {
		seg := rows[start[fid]:start[fid+1]]
		if len(seg) == 0 {
			continue
		}
		err := walkShard(ctx, f.Shards[fid], opts, len(seg), func(k int) uint64 { return x.Row(int(seg[k])).Offset },
			func(k int, v *headerView) error {
				nm, err := name(int(seg[k]), v)
				if err != nil {
					return err
				}
				ref, ok := names.add(nm)
				if !ok {
					return fmt.Errorf("%s: the rows are not in shard order, so every name is held in memory to list them in index order, and they pass %d GiB", x.Path, maxNameBytes>>30)
				}
				where[seg[k]] = ref
				return nil
			}, nil)
		if err != nil {
			return err
		}
	}
	rows = nil
	for i := 0; i < n; i++ {
		if err := emit(i, names.get(where[i])); err != nil {
			return err
		}
	}
	return nil
}

// nameArena holds names, each prefixed with its length, in chunks that are
// never copied as the arena grows; a 32-bit reference locates one (chunk
// number above, offset in the chunk below).
type nameArena struct{ chunks [][]byte }

const (
	nameChunkBits = 20 // 1 MiB chunks: offsets take 20 bits, chunk numbers 12
	maxNameBytes  = 1 << 32
)

func (a *nameArena) add(name string) (uint32, bool) {
	need := binary.MaxVarintLen64 + len(name)
	last := len(a.chunks) - 1
	if last < 0 || len(a.chunks[last])+need > cap(a.chunks[last]) || len(a.chunks[last]) >= 1<<nameChunkBits {
		if len(a.chunks) == maxNameBytes>>nameChunkBits {
			return 0, false
		}
		a.chunks = append(a.chunks, make([]byte, 0, max(1<<nameChunkBits, need)))
		last++
	}
	c := a.chunks[last]
	ref := uint32(last)<<nameChunkBits | uint32(len(c))
	c = binary.AppendUvarint(c, uint64(len(name)))
	a.chunks[last] = append(c, name...)
	return ref, true
}

func (a *nameArena) get(ref uint32) string {
	b := a.chunks[ref>>nameChunkBits][ref&(1<<nameChunkBits-1):]
	l, k := binary.Uvarint(b)
	return string(b[k : k+int(l)])
}
