package parquet

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// File is one Parquet file of a dataset, open for reading.
type File struct {
	Path  string // as opened
	Rel   string // its name in the dataset: relative to the directory, or its base name
	Split string
	Size  int64
	Rows  int64
	// FirstRow is the number of the file's first row in its split, which
	// names the rows of a file without a key column.
	FirstRow int64

	f    *os.File
	pf   *pq.File
	cols []readColumn
	key  int // the key's leaf column, -1 for none
	// role says, by leaf column, which column a value goes to and whether
	// it is a file column's path: -1 for none.
	role    []int
	isPath  []bool
	skipped []string // columns left out, with why
}

// readColumn is a column read as members.
type readColumn struct {
	name     string
	kind     pq.Kind
	unsigned bool
	file     bool   // a struct {bytes, path}: Image, Audio
	ext      string // the member's extension; "" for a file column's own
	leaf     int
	pathLeaf int // a file column's path, -1 for none
}

// fail wraps err as an error of f at byte offset off (-1: none).
func (f *File) fail(off int64, err error) error {
	if off >= 0 {
		return fmt.Errorf("%s: offset %d: %w", f.Path, off, err)
	}
	return fmt.Errorf("%s: %w", f.Path, err)
}

// recovered runs fn, turning a panic of the Parquet library on a damaged
// file into an error.
func recovered(fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v: %w", r, ErrFormat)
		}
	}()
	return fn()
}

// OpenFile opens one Parquet file and checks its footer: every column
// chunk lies inside the file, and the row counts add up.
func OpenFile(path string) (*File, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	file := &File{Path: path, Rel: filepath.Base(path), Size: st.Size(), f: f, key: -1}
	if st.Size() < 12 {
		f.Close()
		return nil, file.fail(0, fmt.Errorf("%d bytes, too short for a Parquet file: %w", st.Size(), ErrFormat))
	}
	// parquet-go allocates the footer's length as the file claims it:
	// that length is checked against the file first.
	var tail [8]byte
	if _, err := f.ReadAt(tail[:], st.Size()-8); err != nil {
		f.Close()
		return nil, file.fail(st.Size()-8, err)
	}
	n := int64(binary.LittleEndian.Uint32(tail[:4]))
	if n > st.Size()-12 {
		f.Close()
		return nil, file.fail(st.Size()-8, fmt.Errorf("a footer of %d bytes in a file of %d: %w", n, st.Size(), ErrFormat))
	}
	footer := make([]byte, n)
	if _, err := f.ReadAt(footer, st.Size()-8-n); err != nil {
		f.Close()
		return nil, file.fail(st.Size()-8-n, err)
	}
	if err := checkLists(footer); err != nil {
		f.Close()
		return nil, file.fail(st.Size()-8-n, fmt.Errorf("%w: %w", ErrFormat, err))
	}
	err = recovered(func() error {
		file.pf, err = pq.OpenFile(f, st.Size(), pq.SkipBloomFilters(true), pq.ReadBufferSize(1<<20))
		return err
	})
	if err == nil {
		err = file.check()
	}
	if err == nil {
		err = file.checkCodecs()
	}
	if err != nil {
		f.Close()
		if errors.Is(err, ErrFormat) {
			return nil, file.fail(-1, err)
		}
		return nil, file.fail(-1, fmt.Errorf("%w: %w", ErrFormat, err))
	}
	file.Rows = file.pf.NumRows()
	file.mapColumns()
	return file, nil
}

// check refuses a footer whose figures the file cannot hold, before any
// page is read by them.
func (f *File) check() error {
	md := f.pf.Metadata()
	var rows int64
	for i, rg := range md.RowGroups {
		if rg.NumRows < 0 || rg.NumRows > f.Size*8 {
			return fmt.Errorf("row group %d: %d rows: %w", i, rg.NumRows, ErrFormat)
		}
		rows += rg.NumRows
		for _, c := range rg.Columns {
			m := &c.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			if start < 4 || m.TotalCompressedSize < 0 || start+m.TotalCompressedSize > f.Size {
				return fmt.Errorf("row group %d, column %s: bytes %d to %d of a file of %d: %w",
					i, strings.Join(m.PathInSchema, "."), start, start+m.TotalCompressedSize, f.Size, ErrFormat)
			}
		}
	}
	if rows != md.NumRows {
		return fmt.Errorf("%d rows, but its row groups hold %d: %w", md.NumRows, rows, ErrFormat)
	}
	return nil
}

// mapColumns decides what each top-level column becomes: a plain leaf, a
// file struct, or nothing (other nested types).
func (f *File) mapColumns() {
	fields := f.pf.Schema().Fields()
	leaves := 0
	var count func(n pq.Node) int
	count = func(n pq.Node) int {
		if n.Leaf() {
			return 1
		}
		c := 0
		for _, x := range n.Fields() {
			c += count(x)
		}
		return c
	}
	var files []int // the file columns not named as an extension
	for _, fd := range fields {
		n := count(fd)
		leaf := leaves
		leaves += n
		name := fd.Name()
		switch {
		case fd.Repeated():
			f.skipped = append(f.skipped, name+" (repeated)")
		case fd.Leaf() && !hasKind(fd.Type()):
			// A leaf annotated as a group type (MAP, LIST, VARIANT): a
			// damaged schema; parquet-go panics when asked its kind.
			f.skipped = append(f.skipped, name+" (a leaf of a nested type)")
		case fd.Leaf() && name == KeyColumn && fd.Type().Kind() == pq.ByteArray:
			f.key = leaf
		case fd.Leaf():
			c := readColumn{name: name, kind: fd.Type().Kind(), leaf: leaf, pathLeaf: -1, ext: name}
			if lt := fd.Type().LogicalType(); lt != nil {
				if it, ok := lt.Value.(*format.IntType); ok && !it.IsSigned {
					c.unsigned = true
				}
			}
			if c.kind == pq.Int96 {
				f.skipped = append(f.skipped, name+" (INT96)")
				continue
			}
			f.cols = append(f.cols, c)
		default:
			c, ok := fileColumn(fd, leaf)
			if !ok {
				f.skipped = append(f.skipped, name+" (a nested type)")
				continue
			}
			if fileExts[strings.ToLower(name)] {
				c.ext = name
			} else {
				files = append(files, len(f.cols))
			}
			f.cols = append(f.cols, c)
		}
	}
	// One file column named otherwise (the Hub's "image") gives its
	// members the extension of each file; several, or one beside columns
	// named as extensions, keep their column's name before it.
	single := len(files) == 1
	for _, c := range f.cols {
		if c.ext != "" && (fileExts[strings.ToLower(c.ext)] || c.ext == "bin") {
			single = false
		}
	}
	for _, i := range files {
		if !single {
			f.cols[i].ext = f.cols[i].name + "."
		}
	}
	f.role = make([]int, leaves)
	f.isPath = make([]bool, leaves)
	for i := range f.role {
		f.role[i] = -1
	}
	for i, c := range f.cols {
		f.role[c.leaf] = i
		if c.pathLeaf >= 0 {
			f.role[c.pathLeaf], f.isPath[c.pathLeaf] = i, true
		}
	}
}

// fileColumn tells whether a group is a struct {bytes, path} (Image,
// Audio), and finds its leaves.
func fileColumn(n pq.Node, leaf int) (readColumn, bool) {
	c := readColumn{name: n.(pq.Field).Name(), file: true, leaf: -1, pathLeaf: -1}
	for i, x := range n.Fields() {
		if !x.Leaf() || x.Repeated() || !hasKind(x.Type()) || x.Type().Kind() != pq.ByteArray {
			return c, false
		}
		switch x.Name() {
		case "bytes":
			c.leaf = leaf + i
		case "path":
			c.pathLeaf = leaf + i
		default:
			return c, false
		}
	}
	return c, c.leaf >= 0
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// RowGroups is the number of the file's row groups.
func (f *File) RowGroups() int { return len(f.pf.RowGroups()) }

// groupOffset is where row group g starts in the file.
func (f *File) groupOffset(g int) int64 {
	md := f.pf.Metadata()
	if g < len(md.RowGroups) && len(md.RowGroups[g].Columns) > 0 {
		m := md.RowGroups[g].Columns[0].MetaData
		if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < m.DataPageOffset {
			return m.DictionaryPageOffset
		}
		return m.DataPageOffset
	}
	return -1
}

// Features is the file's "huggingface" metadata, "" for none.
func (f *File) Features() string {
	v, _ := f.pf.Lookup(MetadataKey)
	return v
}

// member is one member of a row, as read.
type member struct {
	name []byte
	data []byte
}

// readGroup reads row group g, from its row from on, handing its rows'
// members to fn, a row's members at a time; prefix goes before every name.
// Each row is numbered from first (the group's first row in its split).
func (f *File) readGroup(ctx context.Context, g int, prefix string, first int64, fn func(row int64, ms []member) error) error {
	return recovered(func() error { return f.readGroupUnsafe(ctx, g, prefix, first, nil, fn) })
}

// readGroupArena is readGroup with the members' bytes in (*a).b, where
// they fit; fn may replace *a.
func (f *File) readGroupArena(ctx context.Context, g int, prefix string, first int64, a **arena, fn func(row int64, ms []member) error) error {
	return recovered(func() error { return f.readGroupUnsafe(ctx, g, prefix, first, a, fn) })
}

func (f *File) readGroupUnsafe(ctx context.Context, g int, prefix string, first int64, a **arena, fn func(row int64, ms []member) error) error {
	if err := f.checkPages(g); err != nil {
		return err
	}
	rg := f.pf.RowGroups()[g]
	rows := rg.Rows()
	defer rows.Close()
	buf := make([]pq.Row, 64)
	sc := f.newScratch()
	row := first
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, err := rows.ReadRows(buf)
		for _, r := range buf[:n] {
			if a != nil {
				sc.arena = &(*a).b
			}
			if err := fn(row, f.members(r, prefix, row, sc)); err != nil {
				return err
			}
			row++
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return f.fail(f.groupOffset(g), fmt.Errorf("row group %d: %w", g, err))
		}
	}
}

// scratch is what members reuses from row to row.
type scratch struct {
	vals, paths []pq.Value
	ms          []member
	// arena, when set, holds the members' bytes where they fit in its
	// capacity (it never grows: what is in it stays put). Names go to
	// names, slabs never reused: an index of the rows may keep views of
	// names past their batch (taridx.Writer keeps extensions and pending
	// stems so), while the bytes are the sink's only until it has
	// written them.
	arena *[]byte
	names []byte
}

// alloc returns n bytes of the arena, or of a new slice where it has no
// room.
func (sc *scratch) alloc(n int) []byte {
	if sc.arena != nil {
		a := *sc.arena
		if len(a)+n <= cap(a) {
			*sc.arena = a[:len(a)+n]
			return a[len(a) : len(a)+n : len(a)+n]
		}
	}
	return make([]byte, n)
}

// allocName returns n bytes for a name, from a slab of names.
func (sc *scratch) allocName(n int) []byte {
	if len(sc.names)+n > cap(sc.names) {
		sc.names = make([]byte, 0, max(n, 64<<10))
	}
	b := sc.names[len(sc.names) : len(sc.names)+n : len(sc.names)+n]
	sc.names = sc.names[:len(sc.names)+n]
	return b
}

func (f *File) newScratch() *scratch {
	return &scratch{vals: make([]pq.Value, len(f.cols)), paths: make([]pq.Value, len(f.cols))}
}

// members gives a row's members (row is its number in its split, which
// names it where it has no key); they hold copies of the row's bytes.
func (f *File) members(r pq.Row, prefix string, row int64, sc *scratch) []member {
	vals, paths := sc.vals, sc.paths
	clear(vals)
	clear(paths)
	var key []byte
	for _, v := range r {
		c := v.Column()
		switch {
		case c == f.key:
			if !v.IsNull() {
				key = v.ByteArray()
			}
		case c < 0 || c >= len(f.role) || f.role[c] < 0:
		case f.isPath[c]:
			paths[f.role[c]] = v
		default:
			vals[f.role[c]] = v
		}
	}
	name := []byte(prefix)
	if key != nil {
		name = append(name, key...)
	} else {
		name = fmt.Appendf(name, "%08d", row)
	}
	stem := len(name)
	ms := sc.ms[:0]
	for i := range f.cols {
		c := &f.cols[i]
		v := vals[i]
		if v.IsNull() || c.file && v.Kind() != pq.ByteArray {
			continue
		}
		ext := c.ext
		if c.file && (c.ext == "" || strings.HasSuffix(c.ext, ".")) {
			ext += fileExt(paths[i], v.ByteArray())
		}
		nm := sc.allocName(stem + 1 + len(ext))
		copy(nm[copy(nm, name[:stem]):], "."+ext)
		var data []byte
		if v.Kind() == pq.ByteArray || v.Kind() == pq.FixedLenByteArray {
			b := v.ByteArray()
			data = sc.alloc(len(b))
			copy(data, b)
		} else {
			data = c.format(v)
		}
		ms = append(ms, member{nm, data})
	}
	sc.ms = ms
	return ms
}

// readRow reads row i of row group g.
func (f *File) readRow(g int, i int64) (pq.Row, error) {
	var out pq.Row
	err := recovered(func() error {
		if err := f.checkPages(g); err != nil {
			return err
		}
		rows := f.pf.RowGroups()[g].Rows()
		defer rows.Close()
		if err := rows.SeekToRow(i); err != nil {
			return err
		}
		buf := make([]pq.Row, 1)
		n, err := rows.ReadRows(buf)
		if n == 1 {
			out = buf[0]
			return nil
		}
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	})
	if err != nil {
		return nil, f.fail(f.groupOffset(g), fmt.Errorf("row group %d, row %d: %w", g, i, err))
	}
	return out, nil
}

// groupKeys calls fn with the key of every row of row group g, in order
// (nil where the row has none), reading the key column alone.
func (f *File) groupKeys(g int, fn func(key []byte)) error {
	n := f.pf.Metadata().RowGroups[g].NumRows
	if f.key < 0 {
		for range n {
			fn(nil)
		}
		return nil
	}
	err := recovered(func() error {
		if err := f.checkPages(g); err != nil {
			return err
		}
		pages := f.pf.RowGroups()[g].ColumnChunks()[f.key].Pages()
		defer pages.Close()
		vals := make([]pq.Value, 256)
		for {
			p, err := pages.ReadPage()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			vr := p.Values()
			for {
				k, err := vr.ReadValues(vals)
				for _, v := range vals[:k] {
					if v.IsNull() {
						fn(nil)
					} else {
						fn(v.ByteArray())
					}
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					pq.Release(p)
					return err
				}
			}
			pq.Release(p)
		}
	})
	if err != nil {
		return f.fail(f.groupOffset(g), fmt.Errorf("row group %d, column %s: %w", g, KeyColumn, err))
	}
	return nil
}

// format gives a value's bytes as a member: byte arrays as they are,
// numbers in decimal, booleans as true or false.
func (c *readColumn) format(v pq.Value) []byte {
	switch v.Kind() {
	case pq.Boolean:
		return strconv.AppendBool(nil, v.Boolean())
	case pq.Int32:
		if c.unsigned {
			return strconv.AppendUint(nil, uint64(v.Uint32()), 10)
		}
		return strconv.AppendInt(nil, int64(v.Int32()), 10)
	case pq.Int64:
		if c.unsigned {
			return strconv.AppendUint(nil, v.Uint64(), 10)
		}
		return strconv.AppendInt(nil, v.Int64(), 10)
	case pq.Float:
		return strconv.AppendFloat(nil, float64(v.Float()), 'g', -1, 32)
	case pq.Double:
		return strconv.AppendFloat(nil, v.Double(), 'g', -1, 64)
	}
	return append([]byte{}, v.ByteArray()...)
}

// fileExt is the extension of a file column's member: its path's, where
// that is a known one, else what its bytes start with.
func fileExt(path pq.Value, b []byte) string {
	if !path.IsNull() && path.Kind() == pq.ByteArray {
		p := string(path.ByteArray())
		if i := strings.LastIndexByte(p, '.'); i >= 0 && fileExts[strings.ToLower(p[i+1:])] {
			return strings.ToLower(p[i+1:])
		}
	}
	switch {
	case bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff}):
		return "jpg"
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte("GIF8")):
		return "gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "webp"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WAVE":
		return "wav"
	case bytes.HasPrefix(b, []byte("BM")):
		return "bmp"
	case bytes.HasPrefix(b, []byte("II*\x00")), bytes.HasPrefix(b, []byte("MM\x00*")):
		return "tiff"
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(b, []byte("OggS")):
		return "ogg"
	case bytes.HasPrefix(b, []byte("ID3")):
		return "mp3"
	}
	return "bin"
}

// Dataset is a Parquet dataset open for reading: one file, or the files
// of a directory's splits.
type Dataset struct {
	path   string
	files  []*File
	multi  bool    // several splits: names start with the split
	groups []group // the source's shards: every row group, in order
	warns  []string

	keysOnce sync.Once
	keys     map[string][]rowRef
	keysErr  error
}

// group is one row group of a file.
type group struct {
	file, index int
	first       int64 // its first row's number in its split
	size        int64 // its bytes in the file
}

// ErrEmpty: a directory holds no Parquet file.
var ErrEmpty = errors.New("no Parquet files")

// Open opens a Parquet file, or a directory of them (a Hub dataset).
func Open(path string) (*Dataset, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	d := &Dataset{path: path}
	var splits []split
	if st.IsDir() {
		if splits, err = findSplits(path); err != nil {
			return nil, err
		}
		if len(splits) == 0 {
			return nil, fmt.Errorf("%s: %w", path, ErrEmpty)
		}
	} else {
		splits = []split{{"train", []string{""}}}
	}
	d.multi = len(splits) > 1
	for _, s := range splits {
		var first int64
		for _, rel := range s.files {
			p := path
			if rel != "" {
				p = filepath.Join(path, filepath.FromSlash(rel))
			}
			f, err := OpenFile(p)
			if err != nil {
				d.Close()
				return nil, err
			}
			if rel != "" {
				f.Rel = rel
			}
			f.Split, f.FirstRow = s.name, first
			d.files = append(d.files, f)
			for _, c := range f.skipped {
				d.warns = append(d.warns, fmt.Sprintf("%s: column %s not read", p, c))
			}
			md := f.pf.Metadata()
			row := first
			for g, rg := range md.RowGroups {
				d.groups = append(d.groups, group{file: len(d.files) - 1, index: g, first: row, size: rg.TotalCompressedSize})
				row += rg.NumRows
			}
			first += f.Rows
		}
	}
	return d, nil
}

// Files are the dataset's files, in order.
func (d *Dataset) Files() []*File { return d.files }

func (d *Dataset) prefix(f *File) string {
	if d.multi {
		return f.Split + "/"
	}
	return ""
}

// Close closes the dataset's files.
func (d *Dataset) Close() error {
	var err error
	for _, f := range d.files {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Rows returns a source of the dataset's members: a shard per row group.
func (d *Dataset) Rows(bool) (dataset.PayloadSource, error) { return &source{d: d}, nil }

func (d *Dataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	for _, g := range d.groups {
		f := d.files[g.file]
		err := f.readGroup(ctx, g.index, d.prefix(f), g.first, func(row int64, ms []member) error {
			for _, m := range ms {
				if err := fn(registry.Entry{Name: string(m.name), Size: int64(len(m.data)),
					Fields: []registry.Field{{Key: "file", Value: f.Rel}, {Key: "row", Value: row - f.FirstRow}}}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// rowRef is a row: its row group (an index into Dataset.groups) and its
// place there.
type rowRef struct {
	group int32
	row   int32
}

// keyIndex maps each row's name stem (split prefix and key) to its rows,
// reading the key columns alone; built on the first ReadEntry.
func (d *Dataset) keyIndex() (map[string][]rowRef, error) {
	d.keysOnce.Do(func() {
		d.keys = map[string][]rowRef{}
		for gi, g := range d.groups {
			f := d.files[g.file]
			prefix := d.prefix(f)
			row := int32(0)
			err := f.groupKeys(g.index, func(key []byte) {
				k := prefix + string(key)
				if key == nil {
					k = fmt.Sprintf("%s%08d", prefix, g.first+int64(row))
				}
				d.keys[k] = append(d.keys[k], rowRef{int32(gi), row})
				row++
			})
			if err != nil {
				d.keysErr = err
				return
			}
		}
	})
	return d.keys, d.keysErr
}

// ReadEntry reads the member of that name: the last one of the name, as
// extracting the members would leave it. It finds the rows of its key by
// the key columns, and reads those rows alone.
func (d *Dataset) ReadEntry(name string) ([]byte, error) {
	keys, err := d.keyIndex()
	if err != nil {
		return nil, err
	}
	var found []byte
	ok := false
	// The key is the name up to a dot of its last element: the first, as
	// WebDataset splits names, or a later one for a key of dots.
	base := strings.LastIndexByte(name, '/') + 1
	for i := base; i < len(name); i++ {
		if name[i] != '.' {
			continue
		}
		for _, ref := range keys[name[:i]] {
			g := d.groups[ref.group]
			f := d.files[g.file]
			r, err := f.readRow(g.index, int64(ref.row))
			if err != nil {
				return nil, err
			}
			for _, m := range f.members(r, d.prefix(f), g.first+int64(ref.row), f.newScratch()) {
				if string(m.name) == name {
					found, ok = m.data, true
				}
			}
		}
		if ok {
			break
		}
	}
	if !ok {
		return nil, fmt.Errorf("%s: no member %s: %w", d.path, name, fs.ErrNotExist)
	}
	return found, nil
}

func (d *Dataset) Size() int64 {
	var n int64
	for _, f := range d.files {
		n += f.Size
	}
	return n
}

func (d *Dataset) Unit() string       { return "members" }
func (d *Dataset) Warnings() []string { return d.warns }

// source is a dataset's rows: a shard per row group, a row per member,
// its bytes inline.
type source struct {
	d    *Dataset
	held dataset.Held
}

func (s *source) NumShards() int { return len(s.d.groups) }

func (s *source) ShardName(shard int) string {
	g := s.d.groups[shard]
	return fmt.Sprintf("%s (row group %d)", s.d.files[g.file].Path, g.index)
}

func (s *source) ShardSize(shard int) int64 { return s.d.groups[shard].size }

// batchBytes ends a batch of rows past that many payload bytes (a
// variable for tests). A batch carries its bytes, and the engine holds
// some batches a worker in flight: small batches keep the heap small
// (with 4 MiB, reading to tar took twice the memory and up to twice the
// time, all of it the system's, on the 2-core machine of PERFORMANCE.md).
var batchBytes int64 = 1 << 20

// arena holds a batch's names and bytes until the batch is written.
type arena struct{ b []byte }

func getArena() *arena { return arenas.Get().(*arena) }

var arenas = sync.Pool{New: func() any { return &arena{b: make([]byte, 0, batchBytes+batchBytes/4)} }}

func (a *arena) Release() {
	a.b = a.b[:0]
	arenas.Put(a)
}

// Release gives a written batch's arena back.
func (s *source) Release(b *dataset.Batch) { s.held.Release(b) }

func (s *source) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	g := s.d.groups[shard]
	f := s.d.files[g.file]
	var rows []dataset.Row
	var size int64
	a := getArena()
	defer func() {
		if a != nil {
			a.Release()
		}
	}()
	flush := func() error {
		if len(rows) == 0 {
			return nil
		}
		err := s.held.Emit(rows, a, emit)
		rows, size = nil, 0
		a = getArena()
		return err
	}
	err := f.readGroupArena(ctx, g.index, s.d.prefix(f), g.first, &a, func(_ int64, ms []member) error {
		for _, m := range ms {
			rows = append(rows, dataset.Row{Name: m.name, Kind: dataset.KindFile, Type: '0', Size: int64(len(m.data)),
				Mode: 0o644, DataFile: shard, Offset: -1, Inline: m.data})
			size += int64(len(m.data))
		}
		if size >= batchBytes || len(rows) >= 4096 {
			return flush()
		}
		return nil
	})
	if err == nil {
		err = flush()
	}
	return err
}

// OpenPayload gives a row's bytes, which it carries.
func (s *source) OpenPayload(r *dataset.Row) (io.Reader, error) {
	return bytes.NewReader(r.Inline), nil
}

// hasKind tells whether t has a physical kind: parquet-go's types of
// nested logical types (MAP, LIST, VARIANT) panic when asked, and a
// damaged schema may give a leaf one.
func hasKind(t pq.Type) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	t.Kind()
	return true
}
