package taridx

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/internal/safefile"
)

// Entry is one member to index, as the writer receives it.
type Entry struct {
	Fid     uint16
	Offset  uint64 // offset of the member's own header block
	Size    uint64 // payload size
	Stem    string
	Ext     string
	KeyHash uint64 // KeyHash(Stem), computed by the caller (often in parallel)
}

// WriterOptions tune a Writer.
type WriterOptions struct {
	// Contiguous reorders rows by a stable sort on (keyhash, crashid) before
	// writing and sets the contiguity flag, as glzn's enforce_contiguous.
	// Past SpoolMemory it sorts runs and merges them from a temporary file.
	Contiguous bool
	// SpoolMemory is how many bytes of rows are buffered in memory before
	// they spill to a temporary file beside the output (default 16 MiB).
	SpoolMemory int
}

// ErrUnrepresentable: an extension or crash stem contains "\n", which the
// newline-joined tables cannot hold, or a table outgrew its id type.
var ErrUnrepresentable = errors.New("cannot be represented in a TARIDX file")

// errWriterDone is returned by a Writer used after Close or Abort.
var errWriterDone = errors.New("taridx: writer already closed or aborted")

// Writer builds a TARIDX file from a stream of entries with glzn's rules:
// extension ids and crash ids in order of first appearance, n_stems the
// number of distinct stems, the contiguity flag set when rows of each
// (keyhash, crashid) form one run. Rows are spooled (to memory, then a
// temporary file) because the header and tables that precede them are known
// only at the end; memory grows with the number of distinct stems, not rows.
type Writer struct {
	out  *safefile.File
	opts WriterOptions

	extIDs map[string]uint16
	exts   []string

	// canon maps a key hash to the first stem seen with it, kept in arena.
	canon hashTable
	// The previous row's stem and crash id: a sample's files come one
	// after another, so most rows skip the table lookup.
	lastStem   string
	lastCrash  uint32
	arena      [][]byte
	crashIDs   map[string]uint32
	crashStems []string

	nRows    uint64
	runs     uint64
	lastKey  Key
	sorted   []Row   // Contiguous: the run being gathered
	sortRuns []int64 // Contiguous: rows in each sorted run in the spill file

	chunks [][]byte // full chunks of rows held in memory
	chunk  []byte   // the chunk being filled
	spill  *os.File // rows past SpoolMemory, unnamed
	err    error
	// finished: the whole file is written under its temporary name.
	finished bool
}

// stemRef locates a stem in the arena: chunk<<40 | offset<<20 | length.
type stemRef uint64

const (
	arenaChunk = 1 << 20
	maxStemLen = 1<<20 - 1
)

// Create starts a TARIDX file at path. Nothing appears at path until Close
// succeeds; Abort (or a failed Close) leaves an earlier file untouched.
func Create(path string, opts WriterOptions) (*Writer, error) {
	out, err := safefile.Create(path)
	if err != nil {
		return nil, err
	}
	if opts.SpoolMemory <= 0 {
		opts.SpoolMemory = 16 << 20
	}
	return &Writer{
		out:      out,
		opts:     opts,
		extIDs:   make(map[string]uint16),
		crashIDs: make(map[string]uint32),
	}, nil
}

func (w *Writer) stem(ref stemRef) []byte {
	chunk, off, n := ref>>40, (ref>>20)&(1<<20-1), ref&(1<<20-1)
	return w.arena[chunk][off : off+n]
}

func (w *Writer) keep(stem string) stemRef {
	last := len(w.arena) - 1
	if last < 0 || len(w.arena[last])+len(stem) > cap(w.arena[last]) {
		w.arena = append(w.arena, make([]byte, 0, arenaChunk))
		last++
	}
	off := len(w.arena[last])
	w.arena[last] = append(w.arena[last], stem...)
	return stemRef(uint64(last)<<40 | uint64(off)<<20 | uint64(len(stem)))
}

// Add appends one row.
func (w *Writer) Add(e Entry) error {
	if w.err != nil {
		return w.err
	}
	extID, ok := w.extIDs[e.Ext]
	if !ok {
		if strings.IndexByte(e.Ext, '\n') >= 0 {
			return w.fail(fmt.Errorf("extension %q contains a newline: %w", e.Ext, ErrUnrepresentable))
		}
		if len(w.exts) == 1<<16 {
			return w.fail(fmt.Errorf("more than 65536 extensions: %w", ErrUnrepresentable))
		}
		extID = uint16(len(w.exts))
		w.extIDs[e.Ext] = extID
		w.exts = append(w.exts, e.Ext)
	}
	var crashID uint32
	if w.nRows > 0 && e.KeyHash == w.lastKey.Hash && e.Stem == w.lastStem {
		crashID = w.lastCrash
	} else if ref, ok := w.canon.get(e.KeyHash); !ok {
		if len(e.Stem) > maxStemLen {
			return w.fail(fmt.Errorf("stem of %d bytes is too long", len(e.Stem)))
		}
		w.canon.put(e.KeyHash, w.keep(e.Stem))
	} else if string(w.stem(ref)) != e.Stem {
		// A different stem with the same hash: a crash. Number it in order
		// of first appearance, as glzn does.
		if crashID, ok = w.crashIDs[e.Stem]; !ok {
			if strings.IndexByte(e.Stem, '\n') >= 0 {
				return w.fail(fmt.Errorf("crash stem %q contains a newline: %w", e.Stem, ErrUnrepresentable))
			}
			crashID = uint32(len(w.crashStems) + 1)
			w.crashIDs[e.Stem] = crashID
			w.crashStems = append(w.crashStems, e.Stem)
		}
	}
	w.lastStem, w.lastCrash = e.Stem, crashID
	r := Row{Fid: e.Fid, Offset: e.Offset, Size: e.Size, ExtID: extID, CrashID: crashID, KeyHash: e.KeyHash}
	if k := r.Key(); w.nRows == 0 || k != w.lastKey {
		w.runs++
		w.lastKey = k
	}
	w.nRows++
	if w.opts.Contiguous {
		w.sorted = append(w.sorted, r)
		if len(w.sorted)*RecordSize >= w.opts.SpoolMemory {
			if err := w.spillRun(); err != nil {
				return w.fail(err)
			}
		}
		return nil
	}
	return w.put(r)
}

// compareKeys orders rows by (keyhash, crashid), as glzn's
// enforce_contiguous does.
func compareKeys(a, b Row) int {
	switch {
	case a.KeyHash != b.KeyHash:
		if a.KeyHash < b.KeyHash {
			return -1
		}
		return 1
	case a.CrashID != b.CrashID:
		if a.CrashID < b.CrashID {
			return -1
		}
		return 1
	}
	return 0
}

// spillRun sorts the gathered rows (stably) and appends them to the spill
// file as one run: --contiguous is an external merge sort, so memory stays
// at SpoolMemory whatever the number of rows.
func (w *Writer) spillRun() error {
	slices.SortStableFunc(w.sorted, compareKeys)
	if w.spill == nil {
		f, err := os.CreateTemp(filepath.Dir(w.out.Target()), safefile.TempName("rows"))
		if err != nil {
			return err
		}
		os.Remove(f.Name()) // unnamed: vanishes with the process
		w.spill = f
	}
	bw := bufio.NewWriterSize(w.spill, 1<<20)
	var b [RecordSize]byte
	for _, r := range w.sorted {
		PutRow(b[:], r)
		bw.Write(b[:])
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	w.sortRuns = append(w.sortRuns, int64(len(w.sorted)))
	w.sorted = w.sorted[:0]
	return nil
}

// mergeRuns writes the spilled runs to out in (keyhash, crashid) order;
// among equal keys, earlier runs first, so the whole sort stays stable.
func (w *Writer) mergeRuns(out io.Writer) error {
	type cursor struct {
		r    *bufio.Reader
		left int64
		row  Row
		run  int
	}
	var cur []*cursor
	var start int64
	for i, n := range w.sortRuns {
		c := &cursor{r: bufio.NewReaderSize(io.NewSectionReader(w.spill, start*RecordSize, n*RecordSize), 64<<10), left: n, run: i}
		start += n
		cur = append(cur, c)
	}
	var b [RecordSize]byte
	next := func(c *cursor) (bool, error) {
		if c.left == 0 {
			return false, nil
		}
		if _, err := io.ReadFull(c.r, b[:]); err != nil {
			return false, err
		}
		c.row, c.left = DecodeRow(b[:]), c.left-1
		return true, nil
	}
	live := cur[:0]
	for _, c := range cur {
		ok, err := next(c)
		if err != nil {
			return err
		}
		if ok {
			live = append(live, c)
		}
	}
	less := func(x, y *cursor) bool {
		if c := compareKeys(x.row, y.row); c != 0 {
			return c < 0
		}
		return x.run < y.run
	}
	// A linear pick is enough: runs are SpoolMemory each, so a few hundred
	// even for billions of rows, and the merge is bound by the writes.
	for len(live) > 0 {
		best := 0
		for i := 1; i < len(live); i++ {
			if less(live[i], live[best]) {
				best = i
			}
		}
		PutRow(b[:], live[best].row)
		if _, err := out.Write(b[:]); err != nil {
			return err
		}
		ok, err := next(live[best])
		if err != nil {
			return err
		}
		if !ok {
			live = append(live[:best], live[best+1:]...)
		}
	}
	return nil
}

// spoolChunk is the unit rows are buffered in: filled in place, kept or
// written out whole, never copied to grow.
const spoolChunk = 1 << 20

func (w *Writer) put(r Row) error {
	if len(w.chunk)+RecordSize > cap(w.chunk) {
		if err := w.flushChunk(); err != nil {
			return w.fail(err)
		}
	}
	n := len(w.chunk)
	w.chunk = w.chunk[:n+RecordSize]
	PutRow(w.chunk[n:], r)
	return nil
}

// flushChunk retires the current chunk: kept in memory while the rows fit
// in SpoolMemory, else written to the spill file (created on first use).
func (w *Writer) flushChunk() error {
	if len(w.chunk) > 0 {
		if w.spill == nil && (len(w.chunks)+1)*spoolChunk > w.opts.SpoolMemory {
			dir := filepath.Dir(w.out.Target())
			f, err := os.CreateTemp(dir, safefile.TempName("rows"))
			if err != nil {
				return err
			}
			os.Remove(f.Name()) // unnamed: vanishes with the process
			w.spill = f
			for _, c := range w.chunks {
				if _, err := f.Write(c); err != nil {
					return err
				}
			}
			w.chunks = nil
		}
		if w.spill != nil {
			if _, err := w.spill.Write(w.chunk); err != nil {
				return err
			}
			w.chunk = w.chunk[:0]
			return nil
		}
		w.chunks = append(w.chunks, w.chunk)
	}
	w.chunk = make([]byte, 0, spoolChunk)
	return nil
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// NStems is the number of distinct stems added so far.
func (w *Writer) NStems() uint64 { return uint64(w.canon.len() + len(w.crashStems)) }

// Rows is the number of rows added so far.
func (w *Writer) Rows() uint64 { return w.nRows }

// Exts returns the extension table so far, by id.
func (w *Writer) Exts() []string { return w.exts }

// CrashStems returns the crash-stem table so far, by crash id - 1.
func (w *Writer) CrashStems() []string { return w.crashStems }

// Contiguous reports whether the rows as written form one run per sample.
func (w *Writer) Contiguous() bool {
	return w.opts.Contiguous || w.nRows < 2 || w.runs == w.NStems()
}

// Close writes the header, tables and rows and renames the file into place.
func (w *Writer) Close() error {
	if err := w.Finish(); err != nil {
		return err
	}
	return w.Commit()
}

// Finish writes the header, tables and rows under the file's temporary
// name; Commit then renames it into place, or Abort discards it. A caller
// writing an index beside other outputs renames them all only once every
// one is complete.
func (w *Writer) Finish() error {
	if w.finished {
		return nil
	}
	defer w.release()
	if w.err != nil {
		w.out.Abort()
		return w.err
	}
	if err := w.finish(); err != nil {
		w.out.Abort()
		return fmt.Errorf("writing %s: %w", w.out.Target(), err)
	}
	w.finished = true
	return nil
}

// Commit renames the file completed by Finish into place, replacing an
// earlier index of the same name: an index is derived from its shards, and
// `index` rebuilds it in place. (Conversions that write a fold commit its
// shards first, exclusively unless replacing, so two runs into one new
// fold never both get this far.)
func (w *Writer) Commit() error {
	if !w.finished {
		if w.err != nil && w.err != errWriterDone {
			return w.err
		}
		return errors.New("taridx: Commit before Finish")
	}
	return w.out.CommitReplace()
}

// Abort discards the output.
func (w *Writer) Abort() {
	w.release()
	w.out.Abort()
}

func (w *Writer) release() {
	if w.err == nil {
		w.err = errWriterDone
	}
	if w.spill != nil {
		w.spill.Close()
		w.spill = nil
	}
	w.canon, w.arena, w.sorted, w.chunks, w.chunk = hashTable{}, nil, nil, nil, nil
}

func (w *Writer) finish() error {
	extBlock := strings.Join(w.exts, "\n")
	crashBlock := strings.Join(w.crashStems, "\n")
	h := Header{
		Major: Major, Minor: Minor, RecSize: RecordSize, HdrSize: HeaderSize,
		NStems:   w.NStems(),
		NRows:    w.nRows,
		NExt:     uint32(len(w.exts)),
		NCrash:   uint32(len(w.crashStems)),
		OffCrash: HeaderSize + uint64(len(extBlock)),
		OffArr:   HeaderSize + uint64(len(extBlock)) + uint64(len(crashBlock)),
	}
	if w.Contiguous() {
		h.Flags |= FlagContiguous
	}
	hb, _ := h.MarshalBinary()
	bw := bufio.NewWriterSize(w.out, 1<<20)
	bw.Write(hb)
	bw.WriteString(extBlock)
	bw.WriteString(crashBlock)
	if w.opts.Contiguous {
		if len(w.sortRuns) > 0 {
			if len(w.sorted) > 0 {
				if err := w.spillRun(); err != nil {
					return err
				}
			}
			if err := w.mergeRuns(bw); err != nil {
				return err
			}
			return bw.Flush()
		}
		slices.SortStableFunc(w.sorted, compareKeys)
		var b [RecordSize]byte
		for _, r := range w.sorted {
			PutRow(b[:], r)
			bw.Write(b[:])
		}
		return bw.Flush()
	}
	if w.spill == nil {
		if err := bw.Flush(); err != nil {
			return err
		}
		for _, c := range append(w.chunks, w.chunk) {
			if _, err := w.out.Write(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := w.flushChunk(); err != nil {
		return err
	}
	if _, err := w.spill.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// Both are files: io.Copy moves the rows in the kernel (copy_file_range).
	_, err := io.Copy(w.out.File, w.spill)
	return err
}
