package formatcompare

import (
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/internal/mapped"

	"github.com/pierrec/lz4/v4"
)

// Format names, as report.json and --formats spell them.
const (
	TarTARIDX   = "tar+taridx"
	Barecat     = "barecat"
	BarecatWrap = "barecat-wrap"
	TBLv1       = "tbl-v1"
	TBLv2       = "tbl-v2"
	TBLv2LZ4    = "tbl-v2-lz4"
)

// AllFormats is every format with a reader of its own here, in report
// order: what a run compares by default. The formats benchmarked through
// the registry (RegisteredFormats: Parquet, MDS) join when named.
var AllFormats = []string{TarTARIDX, Barecat, BarecatWrap, TBLv1, TBLv2, TBLv2LZ4}

// DefaultFormats are the formats a run compares when none are named:
// AllFormats, then the registered ones (RegisteredFormats) linked into the
// program.
func DefaultFormats() []string {
	return append(slices.Clone(AllFormats), RegisteredFormats()...)
}

// builtinFormats are the formats with readers of their own here.
var builtinFormats = AllFormats

// fileInfo is one file a format reads.
type fileInfo struct {
	Path   string `json:"path"`
	Role   string `json:"role"` // "data" or "index" (TBL: "data+index", split by its header)
	Bytes  int64  `json:"bytes"`
	Shared bool   `json:"shared_with_source,omitempty"` // the source's own tars
}

// opened is a format's reader, open, reading as the format's own loader
// does: read returns source sample i's bytes (in buf's storage when large
// enough) as a loader fetches it at random, with no checking of its own
// (Run checks every read the same way for every format, timed apart);
// scan reads every sample the format holds in its own order; where says
// which bytes of which file a read of sample i touches. verify runs the
// format's own integrity check on a read's bytes, as its reader would (so
// that it can be timed apart), and says which check it is ("" for none).
type opened interface {
	read(i int, buf []byte) ([]byte, error)
	verify(i int, data []byte) (check string, err error)
	scan(ctx context.Context, buf []byte, fn func(i int, data []byte) error) error
	where(i int) (path string, off, size int64, err error)
	close() error
}

// format is one format under test, built into dir.
type format struct {
	name  string
	label string
	dir   string
	src   *source
	// copies: the format holds its own copy of the payloads (false for
	// the tar fold itself and Barecat --wrap, whose data are the source).
	copies bool
	build  func(ctx context.Context, workers int) error
	open   func() (opened, error)
	files  func() ([]fileInfo, error)
	// locate gives the file and offset of sample i's first stored byte.
	locate func(i int) (string, int64, error)
	// holds: which source samples the format holds (set after the first
	// open).
	holds []bool
}

// Label is the human name of a format.
func Label(name string) string {
	switch name {
	case TarTARIDX:
		return "tar + TARIDX"
	case Barecat:
		return "Barecat"
	case BarecatWrap:
		return "Barecat (--wrap)"
	case TBLv1:
		return "TBL v1"
	case TBLv2:
		return "TBL v2"
	case TBLv2LZ4:
		return "TBL v2 + LZ4"
	}
	if r := byRegistry(name); r != nil {
		return r.Label
	}
	return name
}

func newFormat(name, dir string, src *source) (*format, error) {
	f := &format{name: name, label: Label(name), dir: dir, src: src, copies: true}
	switch name {
	case TarTARIDX:
		f.copies = false
		f.tarTARIDX()
	case Barecat, BarecatWrap:
		f.copies = name == Barecat
		f.barecat(name == BarecatWrap)
	case TBLv1, TBLv2, TBLv2LZ4:
		v := 2
		if name == TBLv1 {
			v = 1
		}
		f.tbl(v, name == TBLv2LZ4)
	default:
		if r := byRegistry(name); r != nil {
			f.registered(r)
			break
		}
		return nil, fmt.Errorf("unknown format %q (want one of %s)", name, strings.Join(AllFormats, ", "))
	}
	return f, nil
}

// clean removes the previous build's outputs.
func (f *format) clean() error {
	if err := os.RemoveAll(f.dir); err != nil {
		return err
	}
	return os.MkdirAll(f.dir, 0o755)
}

func statFiles(paths []string, role string, shared bool) ([]fileInfo, error) {
	var out []fileInfo
	for _, p := range paths {
		st, err := os.Stat(p) // follows Barecat --wrap's links to the tars
		if err != nil {
			return nil, err
		}
		out = append(out, fileInfo{Path: p, Role: role, Bytes: st.Size(), Shared: shared})
	}
	return out, nil
}

// --- tar shards + TARIDX --------------------------------

func (f *format) tarTARIDX() {
	idx := func() string { return filepath.Join(f.dir, f.src.fold+".taridx") }
	f.build = func(ctx context.Context, workers int) error {
		_, err := fold.BuildIndex(ctx, f.src.shards, idx(), fold.IndexOptions{Workers: workers})
		return err
	}
	f.files = func() ([]fileInfo, error) {
		data, err := statFiles(f.src.shards, "data", true)
		if err != nil {
			return nil, err
		}
		// The shards lie elsewhere, so the index names them in a manifest
		// beside it: part of what an index costs here.
		ix, err := statFiles([]string{idx(), fold.ManifestPath(idx())}, "index", false)
		return append(data, ix...), err
	}
	var rowOf []int // source sample -> index row
	f.locate = func(i int) (string, int64, error) {
		s := f.src.samples[i]
		return f.src.shards[s.shard], s.data, nil
	}
	f.open = func() (opened, error) {
		fo, err := fold.Open(idx(), f.src.shards)
		if err != nil {
			return nil, err
		}
		if rowOf == nil {
			type at struct {
				fid int
				off int64
			}
			where := make(map[at]int, fo.Index.Len())
			for r := range fo.Index.Len() {
				row := fo.Index.Row(r)
				where[at{int(row.Fid), int64(row.Offset)}] = r
			}
			rowOf = make([]int, len(f.src.samples))
			f.holds = make([]bool, len(f.src.samples))
			for i, s := range f.src.samples {
				r, ok := where[at{s.shard, s.header}]
				if !ok {
					r = -1
				}
				rowOf[i], f.holds[i] = r, ok
			}
		}
		files, err := openAll(fo.Shards)
		if err != nil {
			return nil, err
		}
		return &tarReader{f: fo, files: files, rowOf: rowOf}, nil
	}
}

// tarReader reads as a loader of TARIDX does: the shards kept open, the
// index in memory, one positioned read at the header's offset + 512.
type tarReader struct {
	f     *fold.Fold
	files []*os.File
	rowOf []int
	hdr   [512]byte
}

func (t *tarReader) row(i int) (taridx.Row, error) {
	r := t.rowOf[i]
	if r < 0 {
		return taridx.Row{}, fmt.Errorf("sample %d is not in the index", i)
	}
	return t.f.Index.Row(r), nil
}

func (t *tarReader) read(i int, buf []byte) ([]byte, error) {
	row, err := t.row(i)
	if err != nil {
		return nil, err
	}
	return readAt(t.files[row.Fid], buf, int64(row.DataOffset()), int64(row.Size))
}

func (t *tarReader) where(i int) (string, int64, int64, error) {
	row, err := t.row(i)
	return t.f.Shards[row.Fid], int64(row.DataOffset()), int64(row.Size), err
}

func (t *tarReader) scan(ctx context.Context, buf []byte, fn func(int, []byte) error) error {
	sampleOf := make([]int, t.f.Index.Len())
	for i := range sampleOf {
		sampleOf[i] = -1
	}
	for i, r := range t.rowOf {
		if r >= 0 {
			sampleOf[r] = i
		}
	}
	return readEach(ctx, len(sampleOf), func(r int) int { return sampleOf[r] }, t.read, buf, fn)
}

// readEach reads, in order k = 0..n-1, the sample sample(k) (none where it
// is -1) with read, reusing buf, and hands each to fn.
func readEach(ctx context.Context, n int, sample func(k int) int, read func(int, []byte) ([]byte, error), buf []byte, fn func(int, []byte) error) error {
	for k := range n {
		i := sample(k)
		if i < 0 {
			continue
		}
		if k%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		data, err := read(i, buf)
		if err != nil {
			return err
		}
		buf = data
		if err := fn(i, data); err != nil {
			return err
		}
	}
	return nil
}

// verify checks the member's header block, as a tar reader does: tar
// holds no checksum of the payload.
func (t *tarReader) verify(i int, _ []byte) (string, error) {
	row, err := t.row(i)
	if err != nil {
		return "", err
	}
	f := t.files[row.Fid]
	if _, err := f.ReadAt(t.hdr[:], int64(row.Offset)); err != nil {
		return "", fmt.Errorf("%s: offset %d: reading the header: %w", f.Name(), row.Offset, err)
	}
	if !tarChecksumOK(&t.hdr) {
		return "", fmt.Errorf("%s: offset %d: %w: header checksum mismatch", f.Name(), row.Offset, errWrongBytes)
	}
	return "tar header", nil
}

// tarChecksumOK checks a header block's checksum: the octal number in
// bytes 148-155, the sum of the block's bytes with those read as spaces.
func tarChecksumOK(h *[512]byte) bool {
	var sum int64
	for k, b := range h {
		if k >= 148 && k < 156 {
			b = ' '
		}
		sum += int64(b)
	}
	field := strings.Trim(string(h[148:156]), " \x00")
	want, err := strconv.ParseInt(field, 8, 64)
	return err == nil && want == sum
}

func (t *tarReader) close() error { return closeAll(t.files) }

// openAll opens the files; on an error, none stays open.
func openAll(paths []string) ([]*os.File, error) {
	files := make([]*os.File, len(paths))
	for k, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			closeAll(files)
			return nil, err
		}
		files[k] = f
	}
	return files, nil
}

// readAt reads size bytes at off into buf's storage (when large enough).
func readAt(f *os.File, buf []byte, off, size int64) ([]byte, error) {
	buf = grow(buf, size)
	if n, err := f.ReadAt(buf, off); n < len(buf) {
		return nil, fmt.Errorf("%s: offset %d: %d of %d bytes read: %w", f.Name(), off, n, size, err)
	}
	return buf, nil
}

// --- Barecat, copied or wrapped --------------------------------

func (f *format) barecat(wrap bool) {
	arch := func() string { return filepath.Join(f.dir, "data.barecat") }
	f.build = func(ctx context.Context, workers int) error {
		_, err := convert.TarToBarecat(ctx, f.src.shards, arch(), convert.BarecatOptions{Wrap: wrap, Workers: workers})
		return err
	}
	f.files = func() ([]fileInfo, error) {
		shards, err := filepath.Glob(arch() + "-shard-*")
		if err != nil {
			return nil, err
		}
		data, err := statFiles(shards, "data", wrap)
		if err != nil {
			return nil, err
		}
		ix, err := statFiles([]string{arch()}, "index", false)
		return append(data, ix...), err
	}
	f.locate = func(i int) (string, int64, error) {
		a, err := barecat.Open(arch())
		if err != nil {
			return "", 0, err
		}
		defer a.Close()
		bf, err := a.Lookup(f.src.samples[i].path)
		if err != nil {
			return "", 0, err
		}
		return a.ShardPaths()[bf.Shard], bf.Offset, nil
	}
	f.open = func() (opened, error) {
		a, err := barecat.Open(arch())
		if err != nil {
			return nil, err
		}
		if f.holds == nil {
			f.holds = make([]bool, len(f.src.samples))
			for i, s := range f.src.samples {
				f.holds[i] = s.path != ""
			}
		}
		files, err := openAll(a.ShardPaths())
		if err != nil {
			a.Close()
			return nil, err
		}
		return &barecatReader{a: a, files: files, src: f.src}, nil
	}
}

// barecatReader reads as barecat's own loader does: a lookup by path in
// the SQLite index, then one positioned read from the shard, kept open.
type barecatReader struct {
	a      *barecat.Archive
	files  []*os.File
	src    *source
	byPath map[string]int
	last   barecat.File // the file read last, for verify
}

func (b *barecatReader) readFile(bf barecat.File, buf []byte) ([]byte, error) {
	b.last = bf
	if bf.Shard < 0 || bf.Shard >= len(b.files) {
		return nil, fmt.Errorf("%s: shard %d of %d", bf.Path, bf.Shard, len(b.files))
	}
	return readAt(b.files[bf.Shard], buf, bf.Offset, bf.Size)
}

func (b *barecatReader) read(i int, buf []byte) ([]byte, error) {
	bf, err := b.a.Lookup(b.src.samples[i].path)
	if err != nil {
		return nil, err
	}
	return b.readFile(bf, buf)
}

func (b *barecatReader) where(i int) (string, int64, int64, error) {
	bf, err := b.a.Lookup(b.src.samples[i].path)
	if err != nil || bf.Shard < 0 || bf.Shard >= len(b.files) {
		return "", 0, 0, cmpOr(err, fmt.Errorf("%s: shard %d of %d", bf.Path, bf.Shard, len(b.files)))
	}
	return b.a.ShardPaths()[bf.Shard], bf.Offset, bf.Size, nil
}

func (b *barecatReader) scan(ctx context.Context, buf []byte, fn func(int, []byte) error) error {
	if b.byPath == nil {
		b.byPath = make(map[string]int, len(b.src.samples))
		for i, s := range b.src.samples {
			b.byPath[s.path] = i
		}
	}
	return b.a.Files(ctx, barecat.ByAddress, func(bf barecat.File) error {
		i, ok := b.byPath[bf.Path]
		if !ok {
			return nil // a file made from a hard link: not a sample
		}
		data, err := b.readFile(bf, buf)
		if err != nil {
			return err
		}
		buf = data
		return fn(i, data)
	})
}

// verify checks the crc32c the index holds for the file read last.
func (b *barecatReader) verify(i int, data []byte) (string, error) {
	bf := b.last
	if bf.Path != b.src.samples[i].path || !bf.HasCRC {
		return "", nil
	}
	if c := crc32.Checksum(data, castagnoli); c != bf.CRC32C {
		return "", fmt.Errorf("%s: offset %d: %w: crc32c %08x, the index says %08x", b.a.ShardPaths()[bf.Shard], bf.Offset, errWrongBytes, c, bf.CRC32C)
	}
	return "crc32c", nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (b *barecatReader) close() error {
	err := closeAll(b.files)
	return cmpOr(b.a.Close(), err)
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// --- TBL v1/v2; sample k is the k-th regular member --------------------------

func (f *format) tbl(version int, lz4 bool) {
	file := func() string { return filepath.Join(f.dir, "data.tbl") }
	f.build = func(ctx context.Context, workers int) error {
		_, err := convert.TarToTBL(ctx, f.src.shards, file(), convert.TBLOptions{Version: version, LZ4: lz4, Workers: workers})
		return err
	}
	f.files = func() ([]fileInfo, error) {
		r, err := tbl.Open(file())
		if err != nil {
			return nil, err
		}
		defer r.Close()
		st, err := os.Stat(file())
		if err != nil {
			return nil, err
		}
		h := r.Header()
		ix := int64(h.HeaderSize) + int64(h.MetadataSize)
		return []fileInfo{
			{Path: file(), Role: "data", Bytes: st.Size() - ix},
			{Path: file(), Role: "index", Bytes: ix},
		}, nil
	}
	f.locate = func(i int) (string, int64, error) {
		r, err := tbl.Open(file())
		if err != nil {
			return "", 0, err
		}
		defer r.Close()
		return file(), r.Sample(i).Offset, nil
	}
	f.open = func() (opened, error) {
		r, err := tbl.Open(file())
		if err != nil {
			return nil, err
		}
		if r.Len() != len(f.src.samples) {
			r.Close()
			return nil, fmt.Errorf("%s: %d samples, but the source has %d regular members", file(), r.Len(), len(f.src.samples))
		}
		if f.holds == nil {
			f.holds = make([]bool, len(f.src.samples))
			for i := range f.holds {
				f.holds[i] = true
			}
		}
		return newTBLReader(r)
	}
}

// tblReader reads as TBL's loader does: the index parsed at open, the
// file mapped into memory, a sample copied out of the mapping (and LZ4
// decoded where stored compressed). Where the file cannot be mapped (not
// Linux or another Unix), a positioned read stands in.
type tblReader struct {
	r   *tbl.Reader
	m   *mapped.Region
	end int64 // bytes mapped from offset 0
}

func newTBLReader(r *tbl.Reader) (*tblReader, error) {
	t := &tblReader{r: r}
	st, err := r.File().Stat()
	if err == nil {
		t.end = st.Size()
		t.m, err = mapped.Map(r.File(), 0, t.end)
	}
	if errors.Is(err, mapped.ErrUnsupported) {
		t.m, err = nil, nil
	}
	if err != nil {
		r.Close()
		return nil, err
	}
	return t, nil
}

func (t *tblReader) read(i int, buf []byte) ([]byte, error) {
	s := t.r.Sample(i)
	stored := int64(s.StoredSize)
	if s.Offset < 0 || s.Offset+stored > t.end {
		return nil, fmt.Errorf("%s: sample %d: bytes %d to %d lie outside the file's %d", t.r.File().Name(), i, s.Offset, s.Offset+stored, t.end)
	}
	var from []byte
	if t.m != nil {
		from = t.m.Bytes(s.Offset, stored)
	} else {
		var err error
		if from, err = readAt(t.r.File(), nil, s.Offset, stored); err != nil {
			return nil, err
		}
	}
	buf = grow(buf, int64(s.Size))
	if !s.Compressed {
		copy(buf, from)
		return buf, nil
	}
	n, err := lz4.UncompressBlock(from, buf)
	if err == nil && n != len(buf) {
		err = fmt.Errorf("%d bytes decoded, the index says %d", n, len(buf))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: offset %d: sample %d: LZ4: %w", t.r.File().Name(), s.Offset, i, err)
	}
	return buf, nil
}

func (t *tblReader) where(i int) (string, int64, int64, error) {
	s := t.r.Sample(i)
	return t.r.File().Name(), s.Offset, int64(s.StoredSize), nil
}

func (t *tblReader) scan(ctx context.Context, buf []byte, fn func(int, []byte) error) error {
	return readEach(ctx, t.r.Len(), func(i int) int { return i }, t.read, buf, fn)
}

// verify checks a v2 sample's CRC-16 (of its uncompressed bytes), where
// the file has checksums.
func (t *tblReader) verify(i int, data []byte) (string, error) {
	h := t.r.Header()
	if h.Version != 2 || h.Flags&tbl.FlagHasChecksums == 0 {
		return "", nil
	}
	s := t.r.Sample(i)
	if c := tbl.CRC16(data); c != s.CRC16 {
		return "", fmt.Errorf("%s: offset %d: %w: CRC-16 %#04x, the index says %#04x", t.r.File().Name(), s.Offset, errWrongBytes, c, s.CRC16)
	}
	return "CRC-16", nil
}

func (t *tblReader) close() error {
	err := t.m.Close()
	return cmpOr(t.r.Close(), err)
}
