package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/format"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/safefile"
)

// CreateOptions are Parquet's own options for writing
// (registry.CreateOptions.Format).
type CreateOptions struct {
	// Split names the files' split: <split>-00000-of-00042.parquet
	// (default "train"). It must match the datasets library's split
	// names, \w+(\.\w+)*.
	Split string
	// Compression is the pages' codec: "none" (the default: images, most
	// of such a dataset's bytes, do not compress, and a codec costs CPU
	// both ways), "snappy" (what pyarrow writes by default), "zstd" or
	// "gzip". The datasets library reads each.
	Compression string
	// RowGroupBytes ends a row group past that many payload bytes
	// (default 64 MiB, or the shard size if smaller): what a reader holds
	// to decode one.
	RowGroupBytes int64
}

// DefaultShardSize is the size past which a file rolls over: the datasets
// library's push_to_hub default (max_shard_size "500MB").
const DefaultShardSize = 500_000_000

// defaultRowGroupBytes: see CreateOptions.RowGroupBytes.
const defaultRowGroupBytes = 64 << 20

// maxGroupRows ends a row group of small rows (see writer.groupRows).
const maxGroupRows = 1 << 17

// WriteStats are the figures of a write.
type WriteStats struct {
	Files   []string `json:"files"` // relative to the dataset's directory
	Rows    int64    `json:"rows"`
	Members int64    `json:"members"`
	Bytes   int64    `json:"bytes"`
	// Columns are the columns besides the key, with the datasets feature
	// each has: "Image", or a Value dtype.
	Columns []ColumnStats `json:"columns"`
}

// ColumnStats is one column as written.
type ColumnStats struct {
	Name    string `json:"name"`
	Feature string `json:"feature"`
}

var errSplit = errors.New("not a split name")

// checkSplit refuses a split name that the datasets library would not
// read from a file name.
func checkSplit(s string) error {
	if s == "" {
		return fmt.Errorf("%q: %w", s, errSplit)
	}
	for _, part := range strings.Split(s, ".") {
		if part == "" {
			return fmt.Errorf("%q: %w", s, errSplit)
		}
		for _, r := range part {
			if !(r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return fmt.Errorf("%q: %w (letters, digits, _ and dots)", s, errSplit)
			}
		}
	}
	return nil
}

func codec(name string) (compress.Codec, error) {
	switch name {
	case "snappy":
		return &pq.Snappy, nil
	case "zstd":
		return &pq.Zstd, nil
	case "gzip":
		return &pq.Gzip, nil
	case "", "none":
		return &pq.Uncompressed, nil
	}
	return nil, fmt.Errorf("compression %q: snappy, zstd, gzip or none", name)
}

// writeOptions are a write's settled options.
type writeOptions struct {
	split     string
	codec     compress.Codec
	shardSize int64
	groupSize int64
	workers   int
	progress  func(dataset.Progress)
	// name names the file numbered i of n (n is unknown, 0, until the
	// end: the file is renamed then).
	name func(i, n int) string
}

func settle(o CreateOptions, shardSize int64, workers int, progress func(dataset.Progress)) (*writeOptions, error) {
	w := &writeOptions{split: o.Split, shardSize: shardSize, groupSize: o.RowGroupBytes, workers: workers, progress: progress}
	if w.split == "" {
		w.split = "train"
	}
	if err := checkSplit(w.split); err != nil {
		return nil, err
	}
	var err error
	if w.codec, err = codec(o.Compression); err != nil {
		return nil, err
	}
	if w.shardSize <= 0 {
		w.shardSize = DefaultShardSize
	}
	if w.groupSize <= 0 {
		w.groupSize = defaultRowGroupBytes
	}
	w.groupSize = min(w.groupSize, w.shardSize)
	w.name = func(i, n int) string { return HubName(w.split, i, n) }
	return w, nil
}

// HubName is the name of file i of n of a split, as push_to_hub names
// them: train-00000-of-00042.parquet.
func HubName(split string, i, n int) string {
	return fmt.Sprintf("%s-%05d-of-%05d.parquet", split, i, n)
}

// plan is what a first pass over the rows learns: the columns, in the
// order their extensions first appear, each of the kind every member's
// bytes fit.
type plan struct {
	cols  []column
	index map[string]int // extension -> column
}

// maxTyped bounds the member a typed column (cls, txt, json) reads to
// check that it parses: a larger one makes the column binary.
const maxTyped = 1 << 20

// planRows makes the plan of src's rows, refusing a row that has no place
// in a row of a column per extension.
func planRows(ctx context.Context, src dataset.PayloadSource, workers int) (*plan, error) {
	s := &planSink{src: src, p: &plan{index: map[string]int{}}, binary: map[string]bool{}}
	s.files, _ = src.(dataset.ShardFiles)
	err := dataset.Run(ctx, src, s, dataset.Options{Workers: workers})
	return s.p, err
}

// planSink is planRows' sink. Reading the members of the typed columns
// (cls, txt, json) to check that they parse is most of the pass's work:
// Prepare does it, on the workers, in parallel; Write names the columns in
// order and takes their verdicts.
type planSink struct {
	src   dataset.PayloadSource
	files dataset.ShardFiles // nil: Write reads the members
	p     *plan

	// binary are the extensions a member of which does not fit their
	// candidate kind: their column is binary whatever comes, and Prepare
	// reads no more of their members. A worker that reads it late only
	// checks a member in vain.
	mu     sync.Mutex
	binary map[string]bool
}

// verdict is what Prepare found of a row: whether its bytes fit its
// extension's candidate kind, or that it did not look.
type verdict int8

const (
	unchecked verdict = iota
	fitsKind
	notKind
)

func (s *planSink) Prepare(b *dataset.Batch) error {
	if s.files == nil {
		return nil // Write reads each member through the source
	}
	var v []verdict
	var f *os.File
	var buf []byte
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	for i := range b.Rows {
		r := &b.Rows[i]
		_, ext, ok := splitName(r.Name)
		if !ok || r.Kind != dataset.KindFile {
			continue
		}
		k := candidate(string(ext))
		if k != kindInt64 && k != kindString {
			continue
		}
		if s.isBinary(string(ext)) {
			continue
		}
		if v == nil {
			v = make([]verdict, len(b.Rows))
		}
		v[i] = notKind
		if r.Size > maxTyped {
			s.setBinary(ext)
			continue
		}
		data := r.Inline
		if data == nil && r.Size > 0 {
			if f == nil {
				var err error
				if f, err = s.files.ShardFile(b.Shard); err != nil {
					return err
				}
			}
			buf = slices.Grow(buf[:0], int(r.Size))[:r.Size]
			if _, err := f.ReadAt(buf, r.DataOffset); err != nil {
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("%s, offset %d: %q: %w", f.Name(), r.DataOffset, r.Name, err)
			}
			data = buf
		}
		if fits(k, string(ext), data) {
			v[i] = fitsKind
		} else {
			s.setBinary(ext)
		}
	}
	b.Prep = v
	return nil
}

// setBinary tells the workers that a member of ext's column does not
// parse: whatever its place in the dataset, the column is binary, and the
// rest of its members need no reading.
func (s *planSink) setBinary(ext []byte) {
	s.mu.Lock()
	s.binary[string(ext)] = true
	s.mu.Unlock()
}

func (s *planSink) isBinary(ext string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.binary[ext]
}

func (s *planSink) EndShard(int) error { return nil }

func (s *planSink) Write(b *dataset.Batch) error {
	v, _ := b.Prep.([]verdict)
	p := s.p
	for i := range b.Rows {
		r := &b.Rows[i]
		_, ext, err := checkRow(s.src, b.Shard, r)
		if err != nil {
			return err
		}
		c, ok := p.index[string(ext)]
		if !ok {
			c = len(p.cols)
			p.index[string(ext)] = c
			p.cols = append(p.cols, column{name: string(ext), kind: candidate(string(ext))})
		}
		col := &p.cols[c]
		if col.kind != kindInt64 && col.kind != kindString {
			continue
		}
		var got verdict
		if v != nil {
			got = v[i]
		}
		ok, err = s.fits(b.Shard, r, col, got)
		if err != nil {
			return err
		}
		if !ok {
			col.kind = kindBinary
			s.setBinary(ext)
		}
	}
	return nil
}

// fits tells whether a member fits its typed column: Prepare's verdict;
// where it left none, no when a member anywhere did not fit (Prepare
// skipped it then), else what the member's bytes, read here, say.
func (s *planSink) fits(shard int, r *dataset.Row, c *column, v verdict) (bool, error) {
	if v != unchecked {
		return v == fitsKind, nil
	}
	if s.isBinary(c.name) {
		return false, nil
	}
	if r.Size > maxTyped {
		return false, nil
	}
	b := r.Inline
	if b == nil && r.Size > 0 {
		var err error
		if b, err = dataset.ReadPayload(s.src, r); err != nil {
			return false, fmt.Errorf("%s: %q: %w", s.src.ShardName(shard), r.Name, err)
		}
	}
	return fits(c.kind, c.name, b), nil
}

// checkRow splits a row's name, refusing a row a Hub dataset has no place
// for.
func checkRow(src dataset.Source, shard int, r *dataset.Row) (key, ext []byte, err error) {
	where := func(why string) error {
		at := ""
		if r.Offset >= 0 {
			at = fmt.Sprintf(", offset %d", r.Offset)
		}
		return fmt.Errorf("%s%s: %q: %s: %w", src.ShardName(shard), at, r.Name, why, ErrNotRepresentable)
	}
	if r.Kind != dataset.KindFile {
		return nil, nil, where("a " + r.Kind.String() + ", not a file")
	}
	if !utf8.Valid(r.Name) {
		return nil, nil, where("the name is not UTF-8")
	}
	key, ext, ok := splitName(r.Name)
	switch {
	case !ok:
		return nil, nil, where("no extension (WebDataset's key.ext)")
	case string(ext) == KeyColumn:
		return nil, nil, where("the extension is the key column's name")
	}
	return key, ext, nil
}

// writer writes samples into files of a directory, rolling over by size.
type writer struct {
	ctx    context.Context
	dir    string
	o      *writeOptions
	l      *layout
	leaves []leaf
	meta   *format.FileMetaData // every file's footer, but for its rows
	st     WriteStats

	f  *safefile.File
	fw *fileWriter
	// fill is the row group being filled; free holds the other, once
	// written: two take turns.
	fill  *rowGroup
	free  chan *rowGroup
	group int64 // payload bytes in the row group
	file  int64 // payload bytes in the file
	temps []string
}

func newWriter(ctx context.Context, dir string, l *layout, o *writeOptions) (*writer, error) {
	meta, err := newTemplate(l, []pq.WriterOption{pq.Compression(o.codec), pq.DataPageVersion(1),
		pq.KeyValueMetadata(MetadataKey, l.features()), pq.CreatedBy("itarconv", "", "")})
	if err != nil {
		return nil, err
	}
	w := &writer{ctx: ctx, dir: dir, o: o, l: l, leaves: leavesOf(l), meta: meta, free: make(chan *rowGroup, 1)}
	w.fill = newRowGroup(len(w.leaves))
	w.free <- newRowGroup(len(w.leaves))
	w.st.Columns = columnStats(l.cols)
	return w, nil
}

// columnStats are the columns' figures: each with its datasets feature.
func columnStats(cols []column) []ColumnStats {
	var st []ColumnStats
	for _, c := range cols {
		f := "Image"
		if c.kind != kindImage {
			f = c.kind.dtype()
		}
		st = append(st, ColumnStats{c.name, f})
	}
	return st
}

// open starts the next file, under a temporary name until the number of
// files is known.
func (w *writer) open() error {
	name := filepath.Join(w.dir, fmt.Sprintf(".%s-%05d.tmp", w.o.split, len(w.temps)))
	f, err := safefile.Create(name)
	if err != nil {
		return err
	}
	w.f = f
	w.temps = append(w.temps, name)
	if w.fw, err = newFileWriter(f, w.meta, w.leaves, w.o.codec, w.free); err != nil {
		f.Abort()
		w.f = nil
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// add adds a sample of size payload bytes (its cells, each leaf's value),
// ending the row group and the file past their sizes.
func (w *writer) add(cells []cell, size int64) error {
	if w.fw == nil {
		if err := w.open(); err != nil {
			return err
		}
	}
	w.fill.add(w.leaves, cells)
	w.st.Rows++
	w.group += size
	w.file += size
	// A group of small rows ends at maxGroupRows: what a reader decodes at
	// once.
	if w.group < w.o.groupSize && w.fill.rows < maxGroupRows {
		return nil
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	if err := w.commit(); err != nil {
		return err
	}
	// The shard size counts payload bytes, as push_to_hub's max_shard_size
	// counts the table's bytes before encoding.
	if w.file >= w.o.shardSize {
		return w.closeFile()
	}
	return nil
}

// commit hands the filled group to the file's writer and takes the other
// once it is written.
func (w *writer) commit() error {
	err := w.fw.commit(w.fill)
	if err != nil {
		return fmt.Errorf("writing %s: %w", w.f.Name(), err)
	}
	w.fill, w.group = <-w.free, 0
	return nil
}

func (w *writer) closeFile() error {
	if w.fw == nil {
		return nil
	}
	var err error
	if w.fill.rows > 0 {
		err = w.commit()
	}
	if cerr := w.fw.close(err != nil); err == nil {
		err = cerr
	}
	if err == nil {
		err = w.f.Commit()
	}
	w.f.Abort()
	w.fw, w.group, w.file = nil, 0, 0
	if err != nil {
		return fmt.Errorf("writing %s: %w", w.f.Name(), err)
	}
	return nil
}

// finish closes the last file (a dataset of no rows gets one file of no
// rows, so that its features stay) and renames the files to their names.
func (w *writer) finish() error {
	if len(w.temps) == 0 {
		if err := w.open(); err != nil {
			return err
		}
	}
	if err := w.closeFile(); err != nil {
		return err
	}
	w.fill.reset()
	for i, t := range w.temps {
		name := w.o.name(i, len(w.temps))
		if err := os.Rename(t, filepath.Join(w.dir, name)); err != nil {
			return err
		}
		w.st.Files = append(w.st.Files, name)
	}
	return nil
}

// abort closes what is open; the caller removes the directory.
func (w *writer) abort() {
	if w.fw != nil {
		w.fw.close(true)
		w.f.Abort()
		w.fw = nil
	}
	w.fill.reset()
}

// rowsSink is the second pass: each row goes to its sample's row.
type rowsSink struct {
	src   dataset.PayloadSource
	files dataset.ShardFiles
	p     *plan
	w     *writer

	// The sample being built: its key, and each leaf's value.
	key     []byte
	cells   []cell
	open    bool
	last    int // the last column filled, -1 for none
	bytes   int64
	members int
}

// prepared is what Prepare leaves for a batch: each row's column, and the
// batch's payloads mapped where the source's shards are files.
type prepared struct {
	cols   []int32
	region *mapped.Region
	where  string
}

func (s *rowsSink) Prepare(b *dataset.Batch) error {
	p := &prepared{cols: make([]int32, len(b.Rows))}
	b.Prep = p
	lo, hi := int64(-1), int64(0)
	for i := range b.Rows {
		r := &b.Rows[i]
		_, ext, err := checkRow(s.src, b.Shard, r)
		if err != nil {
			return err
		}
		c, ok := s.p.index[string(ext)]
		if !ok {
			return fmt.Errorf("%s: %q: an extension the first pass did not see: the source changed", s.src.ShardName(b.Shard), r.Name)
		}
		p.cols[i] = int32(c)
		if r.Inline == nil && r.Size > 0 {
			if lo < 0 {
				lo = r.DataOffset
			}
			lo, hi = min(lo, r.DataOffset), max(hi, r.DataOffset+r.Size)
		}
	}
	if s.files == nil || lo < 0 {
		return nil
	}
	f, err := s.files.ShardFile(b.Shard)
	if err != nil {
		return err
	}
	defer f.Close()
	p.where = f.Name()
	p.region, err = mapped.Map(f, lo, hi-lo)
	if err != nil && !errors.Is(err, mapped.ErrUnsupported) {
		return err
	}
	return nil
}

func (s *rowsSink) EndShard(int) error { return nil }

func (s *rowsSink) Write(b *dataset.Batch) error {
	p := b.Prep.(*prepared)
	// Small values are copied; where larger ones point into the batch's
	// mapping, the group being filled keeps it until it is written. (A
	// sample of this batch in an earlier group is written before that
	// one.) A mapping kept holds its pages in memory: batches of small
	// members keep none.
	kept := false
	defer func() {
		if kept {
			s.w.fill.regions = append(s.w.fill.regions, p.region)
		} else {
			p.region.Close()
		}
	}()
	var r *dataset.Row
	err := mapped.Guard(func() error {
		for i := range b.Rows {
			r = &b.Rows[i]
			var data []byte
			copied := true // data is to be copied (the row's, or small)
			switch {
			case r.Inline != nil || r.Size == 0:
				data = r.Inline
			case p.region != nil && r.Size < copyBelow:
				data = p.region.Bytes(r.DataOffset, r.Size)
			case p.region != nil:
				data, kept, copied = p.region.Bytes(r.DataOffset, r.Size), true, false
			default:
				var err error
				if data, err = dataset.ReadPayload(s.src, r); err != nil {
					return fmt.Errorf("%s: %q: %w", s.src.ShardName(b.Shard), r.Name, err)
				}
				copied = false // a buffer of its own
			}
			if err := s.member(b.Shard, r, int(p.cols[i]), data, copied); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, mapped.ErrGone) {
		err = fmt.Errorf("%s: %q, payload at offset %d: %w", p.where, r.Name, r.DataOffset, err)
	}
	return err
}

// member adds a member to the sample being built, starting a new one when
// its key differs or its column does not come after the last one filled;
// with copied, its bytes are copied to the group the sample goes to.
func (s *rowsSink) member(shard int, r *dataset.Row, col int, data []byte, copied bool) error {
	key, _, _ := splitName(r.Name)
	if !s.open || col <= s.last || string(key) != string(s.key) {
		if err := s.endSample(); err != nil {
			return err
		}
		s.key = append(s.key[:0], key...)
		if s.cells == nil {
			s.cells = make([]cell, s.w.l.leaves)
		}
		clear(s.cells)
		s.open = true
	}
	s.last = col
	c := &s.p.cols[col]
	// Every copy goes to the group being filled, once the last sample is
	// ended (which may end the group): this sample ends in it, as a group
	// ends only between samples.
	if copied && c.kind != kindInt64 {
		data = s.w.fill.arena.copy(data)
	}
	switch c.kind {
	case kindImage:
		s.cells[c.leaf] = cell{set: true, b: data}
		s.cells[c.leaf+1] = cell{set: true, b: s.w.fill.arena.copy(r.Name)}
	case kindInt64:
		v, err := parseInt(data)
		if err != nil {
			return fmt.Errorf("%s: %q: %w: the source changed since the first pass", s.src.ShardName(shard), r.Name, err)
		}
		s.cells[c.leaf] = cell{set: true, i: v}
	default:
		if data == nil {
			data = []byte{}
		}
		s.cells[c.leaf] = cell{set: true, b: data}
	}
	s.bytes += int64(len(data))
	s.members++
	return nil
}

// endSample writes the sample built.
func (s *rowsSink) endSample() error {
	if !s.open {
		return nil
	}
	s.cells[0] = cell{set: true, b: s.w.fill.arena.copy(s.key)}
	s.w.st.Members += int64(s.members)
	s.w.st.Bytes += s.bytes
	size := s.bytes + int64(len(s.key))
	s.open, s.last, s.bytes, s.members = false, -1, 0, 0
	return s.w.add(s.cells, size)
}

// parseInt parses a member of an int64 column, which the first pass found
// canonical.
func parseInt(b []byte) (int64, error) {
	v, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || strconv.FormatInt(v, 10) != string(b) {
		return 0, fmt.Errorf("%q is not a canonical integer", b)
	}
	return v, nil
}

// writeInput writes in's rows as Parquet files into dir, an empty
// directory: a first pass over its rows plans the columns, a second (a
// source of its own, as registry.Input provides) writes.
func writeInput(ctx context.Context, in registry.Input, dir string, o *writeOptions) (*WriteStats, error) {
	p, err := planInput(ctx, in, o.workers)
	if err != nil {
		return nil, err
	}
	return writePlannedInput(ctx, in, dir, p, o)
}

// planInput is planRows over a source of in's own.
func planInput(ctx context.Context, in registry.Input, workers int) (*plan, error) {
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	return planRows(ctx, src, workers)
}

// writePlannedInput is writePlanned over a source of in's own.
func writePlannedInput(ctx context.Context, in registry.Input, dir string, p *plan, o *writeOptions) (*WriteStats, error) {
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	return writePlanned(ctx, src, dir, p, o)
}

// writePlanned is writeInput's second pass, under the columns of p.
func writePlanned(ctx context.Context, src dataset.PayloadSource, dir string, p *plan, o *writeOptions) (*WriteStats, error) {
	l := newLayout(p.cols)
	p.cols = l.cols
	w, err := newWriter(ctx, dir, l, o)
	if err != nil {
		return nil, err
	}
	s := &rowsSink{src: src, p: p, w: w, last: -1}
	s.files, _ = src.(dataset.ShardFiles)
	err = dataset.Run(ctx, src, s, dataset.Options{Workers: o.workers, Progress: o.progress})
	if err == nil {
		err = s.endSample()
	}
	if err == nil {
		err = w.finish()
	}
	if err != nil {
		w.abort()
		return nil, err
	}
	return &w.st, nil
}
