package taridx

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
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
	// they go to the output file, after room for the tables (default 8 MiB;
	// with Contiguous, sorted runs spill to a temporary file beside it).
	SpoolMemory int
	// StemMemory is how many bytes of stem records and stems are kept in
	// memory before they spill, as sorted runs, to temporary files beside
	// the output (default 16 MiB): the writer's memory does not grow with
	// the number of stems.
	StemMemory int
}

// ErrUnrepresentable: an extension or crash stem contains "\n", which the
// newline-joined tables cannot hold, or a table outgrew its id type.
var ErrUnrepresentable = errors.New("cannot be represented in a TARIDX file")

// errWriterDone is returned by a Writer used after Close or Abort.
var errWriterDone = errors.New("taridx: writer already closed or aborted")

// EntryError is a refused entry of a Batch: Entry is its index in the
// entries given to Prepare.
type EntryError struct {
	Entry int
	Err   error
}

func (e *EntryError) Error() string { return e.Err.Error() }
func (e *EntryError) Unwrap() error { return e.Err }

// Writer builds a TARIDX file from a stream of entries with glzn's rules:
// extension ids and crash ids in order of first appearance, n_stems the
// number of distinct stems, the contiguity flag set when rows of each
// (keyhash, crashid) form one run. Rows are spooled (to memory, then a
// temporary file) because the header and tables that precede them are known
// only at the end. The distinct stems and crashes are found at the end,
// in parallel, from records spilled beside the output past StemMemory
// (stems.go), so memory stays flat in the number of rows and stems.
//
// Entries come one at a time (Add), or in batches that Prepare encodes on
// any goroutine and AddBatch appends in order: the per-entry work runs in
// parallel, and what must follow the dataset's order (extension ids, the
// rows' place) costs a copy of the batch's rows.
type Writer struct {
	out  *safefile.File
	opts WriterOptions

	extIDs map[string]uint16
	exts   []string

	stems   *stemSet
	batches atomic.Uint32 // ids handed out by Prepare
	// Prepare's buffers, reused batch after batch: fresh ones are memory
	// to fault in and zero, a tenth of a scan's time on tiny members.
	scratch sync.Pool // *prepScratch: the stems of a batch
	rowBufs sync.Pool // *[]byte: a batch's rows, back from AddBatch
	added   uint32    // batches added
	bases   []uint64  // by batch id: the row number of its first row
	pending []Entry   // Add's entries, not yet a batch

	// After tables: the crash table, and the crash ids to give rows.
	joined     bool
	nStems     uint64
	crashStems []string
	patch      crashPatch

	nRows    uint64
	runs     uint64
	lastKey  stemKey
	sorted   []seqRow // Contiguous: the run being gathered
	sortRuns []int64  // Contiguous: rows in each sorted run in the spill file

	chunks [][]byte     // full chunks of rows held in memory
	chunk  []byte       // the chunk being filled
	rows   *chunkWriter // rows past SpoolMemory, written into the output
	rowsAt int64        // where rows start in the output, with rows
	spill  *os.File     // Contiguous: sorted runs past SpoolMemory, unnamed
	err    error
	// finished: the whole file is written under its temporary name.
	finished bool

	// part: the writer writes a part of a partitioned index (CreatePart):
	// rows alone, from offset 0, and its stems as a merge reads them.
	part     bool
	firstKey stemKey // the first row's key (a part's, for the merge)
	maxFid   uint16  // the largest fid of a row
}

// stemKey tells samples apart within a writer: rows with equal keys have
// the same stem (but for a 128-bit collision).
type stemKey struct{ hash, hash2 uint64 }

// seqRow is a row with its place in the input, for --contiguous's sort.
type seqRow struct {
	Row
	seq uint64
}

const (
	maxStemLen = 1<<20 - 1
	// addBatch is how many entries Add gathers into one batch.
	addBatch = 4096
)

// Create starts a TARIDX file at path. Nothing appears at path until Close
// succeeds; Abort (or a failed Close) leaves an earlier file untouched.
func Create(path string, opts WriterOptions) (*Writer, error) {
	out, err := safefile.Create(path)
	if err != nil {
		return nil, err
	}
	if opts.SpoolMemory <= 0 {
		opts.SpoolMemory = 8 << 20
	}
	if opts.StemMemory <= 0 {
		opts.StemMemory = 16 << 20
	}
	return &Writer{
		out:    out,
		opts:   opts,
		extIDs: make(map[string]uint16),
		stems:  newStemSet(filepath.Dir(path), opts.StemMemory),
	}, nil
}

// Batch is a run of entries that Prepare encoded for AddBatch.
type Batch struct {
	id     uint32
	rows   []byte   // RecordSize each; ext ids index exts; crash ids 0
	exts   []string // the batch's extensions, in order of appearance
	extAt  []int    // the entry where each extension first appears
	runs   uint64   // changes of sample key, counting the first row
	first  stemKey
	last   stemKey
	maxFid uint16
	err    *EntryError // the entry Prepare refused: AddBatch reports it
	errAt  uint64      // that entry's offset (it has no row)
	stored error       // the stems could not be stored
}

// Offset is the offset of the batch's entry i (an *EntryError's Entry):
// the batch keeps no entries, only their rows.
func (b *Batch) Offset(i int) uint64 {
	if b.err != nil && i == b.err.Entry {
		return b.errAt
	}
	return DecodeRow(b.rows[i*RecordSize:]).Offset
}

// MemSize is about the bytes the prepared batch holds until AddBatch.
func (b *Batch) MemSize() int64 {
	n := int64(cap(b.rows)) + int64(len(b.extAt))*8 + 128
	for _, e := range b.exts {
		n += int64(len(e)) + 16
	}
	return n
}

// Prepare encodes entries for AddBatch. It may run on several goroutines
// at once, for different batches; entries' strings are not kept.
func (w *Writer) Prepare(entries []Entry) *Batch {
	b := &Batch{id: w.batches.Add(1) - 1}
	if rp, _ := w.rowBufs.Get().(*[]byte); rp != nil {
		b.rows = (*rp)[:0]
	}
	if cap(b.rows) < len(entries)*RecordSize {
		b.rows = make([]byte, 0, len(entries)*RecordSize)
	}
	sc, _ := w.scratch.Get().(*prepScratch)
	if sc == nil {
		sc = new(prepScratch)
	}
	recs, stems := sc.recs[:0], sc.stems[:0]
	var key stemKey
	lastExt := -1
	for i := range entries {
		e := &entries[i]
		if len(e.Stem) > maxStemLen {
			b.err = &EntryError{i, fmt.Errorf("stem of %d bytes is too long", len(e.Stem))}
			b.errAt = e.Offset
			break
		}
		ext := lastExt
		if ext < 0 || b.exts[ext] != e.Ext {
			if ext = slices.Index(b.exts, e.Ext); ext < 0 {
				ext = len(b.exts)
				// A copy: the entry's strings may be views of the
				// caller's buffers, which the batch outlives.
				b.exts, b.extAt = append(b.exts, strings.Clone(e.Ext)), append(b.extAt, i)
			}
			lastExt = ext
		}
		if i == 0 || e.KeyHash != key.hash || e.Stem != entries[i-1].Stem {
			key = stemKey{e.KeyHash, w.stems.hash2(e.Stem)}
			recs = append(recs, stemRec{hash: key.hash, hash2: key.hash2, seq: uint64(b.id)<<32 | uint64(i),
				ref: uint64(len(stems))<<20 | uint64(len(e.Stem))})
			stems = append(stems, e.Stem...)
		}
		if i == 0 {
			b.first = key
		}
		if i == 0 || key != b.last {
			b.runs++
		}
		b.last = key
		b.maxFid = max(b.maxFid, e.Fid)
		n := len(b.rows)
		b.rows = b.rows[:n+RecordSize]
		PutRow(b.rows[n:], Row{Fid: e.Fid, Offset: e.Offset, Size: e.Size, ExtID: uint16(ext), KeyHash: e.KeyHash})
	}
	b.stored = w.stems.add(recs, stems)
	sc.recs, sc.stems = recs, stems // the stem set copied them
	w.scratch.Put(sc)
	return b
}

// prepScratch is the memory Prepare gathers a batch's stems in.
type prepScratch struct {
	recs  []stemRec
	stems []byte
}

// AddBatch appends a prepared batch's rows. Batches are added one at a
// time, in the dataset's order. A refused entry is an *EntryError, whose
// offset the batch still gives; a batch added is spent (its memory goes
// to the next Prepare).
func (w *Writer) AddBatch(b *Batch) error {
	if err := w.flushPending(); err != nil {
		return err
	}
	return w.addBatch(b)
}

func (w *Writer) addBatch(b *Batch) error {
	if w.err != nil {
		return w.err
	}
	if w.joined {
		return w.fail(errors.New("taridx: rows added after the tables were read"))
	}
	if b.stored != nil {
		return w.fail(b.stored)
	}
	n := len(b.rows) / RecordSize
	identity := true
	var remap []uint16
	for j, ext := range b.exts {
		id, err := w.extID(ext)
		if err != nil {
			return w.fail(&EntryError{b.extAt[j], err})
		}
		remap = append(remap, id)
		identity = identity && int(id) == j
	}
	if !identity {
		for i := 0; i < len(b.rows); i += RecordSize {
			le.PutUint16(b.rows[i+18:], remap[le.Uint16(b.rows[i+18:])])
		}
	}
	for int(b.id) >= len(w.bases) {
		w.bases = append(w.bases, 0)
	}
	w.bases[b.id] = w.nRows
	w.added++
	if n > 0 {
		w.runs += b.runs
		if w.nRows > 0 && b.first == w.lastKey {
			w.runs--
		}
		if w.nRows == 0 {
			w.firstKey = b.first
		}
		w.lastKey = b.last
		w.maxFid = max(w.maxFid, b.maxFid)
	}
	if w.opts.Contiguous {
		for i := range n {
			w.sorted = append(w.sorted, seqRow{DecodeRow(b.rows[i*RecordSize:]), w.nRows + uint64(i)})
			if len(w.sorted)*(RecordSize+8) >= w.opts.SpoolMemory {
				if err := w.spillRun(); err != nil {
					return w.fail(err)
				}
			}
		}
	} else if err := w.putRows(b.rows); err != nil {
		return w.fail(err)
	}
	w.nRows += uint64(n)
	if b.err != nil {
		return w.fail(b.err) // the caller asks b for the entry's offset
	}
	rows := b.rows[:0] // copied: the next Prepare may take them
	b.rows = nil
	w.rowBufs.Put(&rows)
	return nil
}

var le = binary.LittleEndian

// extID gives ext's id, numbering a new extension in order of appearance.
func (w *Writer) extID(ext string) (uint16, error) {
	if id, ok := w.extIDs[ext]; ok {
		return id, nil
	}
	if strings.IndexByte(ext, '\n') >= 0 {
		return 0, fmt.Errorf("extension %q contains a newline: %w", ext, ErrUnrepresentable)
	}
	if len(w.exts) == 1<<16 {
		return 0, fmt.Errorf("more than 65536 extensions: %w", ErrUnrepresentable)
	}
	id := uint16(len(w.exts))
	// ext may be a view of a batch's memory that its source reuses
	// (names read in place): the table keeps its own copy.
	ext = strings.Clone(ext)
	w.extIDs[ext] = id
	w.exts = append(w.exts, ext)
	return id, nil
}

// Add appends one row. Its extension and stem length are checked at once;
// the crash table, which needs every stem, when the tables are read or
// written.
func (w *Writer) Add(e Entry) error {
	if w.err != nil {
		return w.err
	}
	if w.joined {
		return w.fail(errors.New("taridx: rows added after the tables were read"))
	}
	if _, err := w.extID(e.Ext); err != nil {
		return w.fail(err)
	}
	if len(e.Stem) > maxStemLen {
		return w.fail(fmt.Errorf("stem of %d bytes is too long", len(e.Stem)))
	}
	// The entry waits for a batch: its strings are copied, so that the
	// caller may reuse the memory they view once Add returns.
	e.Stem, e.Ext = strings.Clone(e.Stem), strings.Clone(e.Ext)
	w.pending = append(w.pending, e)
	if len(w.pending) == addBatch {
		return w.flushPending()
	}
	return nil
}

func (w *Writer) flushPending() error {
	if len(w.pending) == 0 || w.err != nil {
		return w.err
	}
	b := w.Prepare(w.pending)
	clear(w.pending) // drop the strings
	w.pending = w.pending[:0]
	return w.addBatch(b)
}

// compareKeys orders rows by (keyhash, crashid), as glzn's
// enforce_contiguous does, and rows of one key in input order: a stable
// sort, with the input order spelled out so that runs merge by key alone.
func compareKeys(a, b seqRow) int {
	if c := cmp.Compare(a.KeyHash, b.KeyHash); c != 0 {
		return c
	}
	if c := cmp.Compare(a.CrashID, b.CrashID); c != 0 {
		return c
	}
	return cmp.Compare(a.seq, b.seq)
}

const seqRowSize = RecordSize + 8

func putSeqRow(b []byte, r seqRow) {
	PutRow(b, r.Row)
	le.PutUint64(b[RecordSize:], r.seq)
}

func decodeSeqRow(b []byte) seqRow {
	return seqRow{DecodeRow(b), le.Uint64(b[RecordSize:])}
}

// spillRun sorts the gathered rows and appends them to the spill file as
// one run: --contiguous is an external merge sort, so memory stays at
// SpoolMemory whatever the number of rows.
func (w *Writer) spillRun() error {
	slices.SortFunc(w.sorted, compareKeys)
	if w.spill == nil {
		f, err := safefile.Scratch(filepath.Dir(w.out.Target()), "rows")
		if err != nil {
			return err
		}
		w.spill = f
	}
	bw := bufio.NewWriterSize(w.spill, syswrite.MaxWrite)
	var b [seqRowSize]byte
	for _, r := range w.sorted {
		putSeqRow(b[:], r)
		bw.Write(b[:])
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	w.sortRuns = append(w.sortRuns, int64(len(w.sorted)))
	w.sorted = w.sorted[:0]
	return nil
}

// mergeRuns hands the spilled runs' rows to emit in (keyhash, crashid,
// input) order.
func (w *Writer) mergeRuns(emit func(seqRow) error) error {
	type cursor struct {
		r    *bufio.Reader
		left int64
		row  seqRow
	}
	var live []*cursor
	var start int64
	var b [seqRowSize]byte
	next := func(c *cursor) (bool, error) {
		if c.left == 0 {
			return false, nil
		}
		if _, err := io.ReadFull(c.r, b[:]); err != nil {
			return false, err
		}
		c.row, c.left = decodeSeqRow(b[:]), c.left-1
		return true, nil
	}
	for _, n := range w.sortRuns {
		c := &cursor{r: bufio.NewReaderSize(io.NewSectionReader(w.spill, start*seqRowSize, n*seqRowSize), 64<<10), left: n}
		start += n
		ok, err := next(c)
		if err != nil {
			return err
		}
		if ok {
			live = append(live, c)
		}
	}
	// A linear pick is enough: runs are SpoolMemory each, so a few hundred
	// even for billions of rows, and the merge is bound by the writes.
	for len(live) > 0 {
		best := 0
		for i := 1; i < len(live); i++ {
			if compareKeys(live[i].row, live[best].row) < 0 {
				best = i
			}
		}
		if err := emit(live[best].row); err != nil {
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
// written out whole, never copied to grow (smaller under a SpoolMemory
// smaller than it).
const spoolChunk = 1 << 20

func (w *Writer) chunkSize() int {
	return min(max(w.opts.SpoolMemory/RecordSize, 1), spoolChunk/RecordSize) * RecordSize
}

// putRows appends encoded rows to the spool.
func (w *Writer) putRows(rows []byte) error {
	for len(rows) > 0 {
		if len(w.chunk) == cap(w.chunk) {
			if err := w.flushChunk(); err != nil {
				return err
			}
		}
		n := copy(w.chunk[len(w.chunk):cap(w.chunk)], rows)
		w.chunk = w.chunk[:len(w.chunk)+n]
		rows = rows[n:]
	}
	return nil
}

// flushChunk retires the current chunk: kept in memory while the rows fit
// in SpoolMemory; past it, the rows go straight into the output, after
// room for the header and tables as they are then (rowsAt), written by a
// goroutine of their own, so that the ordered writer does not wait on
// the disk and the rows are written once.
func (w *Writer) flushChunk() error {
	if len(w.chunk) > 0 {
		if w.rows == nil && (len(w.chunks)+1)*cap(w.chunk) > w.opts.SpoolMemory {
			w.rowsAt = HeaderSize + int64(len(strings.Join(w.exts, "\n")))
			if w.part {
				w.rowsAt = 0 // a part's rows file is rows alone
			}
			w.rows = newChunkWriter(w.out.File, w.rowsAt, w.chunkSize(), w.out.WriteBehind)
			for _, c := range w.chunks {
				w.rows.write(c)
			}
			w.chunks = nil
		}
		if w.rows != nil {
			w.rows.write(w.chunk)
			w.chunk = w.rows.buffer()
			return w.rows.failed()
		}
		w.chunks = append(w.chunks, w.chunk)
	}
	w.chunk = make([]byte, 0, w.chunkSize())
	return nil
}

// chunkWriter writes chunks of rows one after another into a file from a
// goroutine of its own, and hands their buffers back for reuse.
type chunkWriter struct {
	f  *os.File
	at int64
	// written starts the writeback of what is written (so that the
	// commit's sync has little left to wait for).
	written func(end int64)
	size    int // of a new buffer
	queue   chan []byte
	free    chan []byte
	done    chan struct{}
	mu      sync.Mutex
	err     error
}

func newChunkWriter(f *os.File, at int64, size int, written func(end int64)) *chunkWriter {
	c := &chunkWriter{f: f, at: at, size: size, written: written, queue: make(chan []byte, 4), free: make(chan []byte, 6), done: make(chan struct{})}
	// The queue is handed over, not read from c: close takes c.queue
	// away, maybe before the goroutine starts.
	go c.run(c.queue)
	return c
}

func (c *chunkWriter) run(queue <-chan []byte) {
	defer close(c.done)
	for b := range queue {
		if c.failed() == nil {
			if _, err := c.f.WriteAt(b, c.at); err != nil {
				c.mu.Lock()
				c.err = err
				c.mu.Unlock()
			}
			c.at += int64(len(b))
			c.written(c.at)
		}
		select {
		case c.free <- b[:0]:
		default:
		}
	}
}

func (c *chunkWriter) write(b []byte) { c.queue <- b }

// buffer is an empty chunk: one written already, or a new one.
func (c *chunkWriter) buffer() []byte {
	select {
	case b := <-c.free:
		return b
	default:
		return make([]byte, 0, c.size)
	}
}

func (c *chunkWriter) failed() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// close waits for the chunks queued and reports the first error.
func (c *chunkWriter) close() error {
	if c.queue != nil {
		close(c.queue)
		c.queue = nil
		<-c.done
	}
	return c.failed()
}

func (w *Writer) fail(err error) error {
	w.err = err
	return err
}

// Tables finds the distinct stems and the crashes among them, once every
// row is in; NStems, CrashStems and Contiguous call it, and so does Close.
// No rows can be added afterwards.
func (w *Writer) Tables() error {
	if w.err != nil || w.joined {
		return w.err
	}
	if err := w.flushPending(); err != nil {
		return err
	}
	w.joined = true
	// Every prepared batch's stems are in the tables: one never added
	// would count stems that have no rows.
	if n := w.batches.Load(); n != w.added {
		return w.fail(fmt.Errorf("taridx: %d prepared batches, %d added", n, w.added))
	}
	j, err := w.stems.join()
	if err == nil {
		err = w.crashTable(j.crashes)
	}
	w.stems.release()
	if err != nil {
		return w.fail(err)
	}
	w.nStems = j.stems
	return nil
}

// crashTable numbers the crash stems in order of first appearance (the
// first stem of a key hash keeps crash id 0), reads them back from the
// log, and notes the crash id of every run of their rows.
func (w *Writer) crashTable(groups [][]stemRec) error {
	crashes, err := pickCrashStems(groups, func(r stemRec) uint64 { return r.hash2 },
		func(r stemRec) (uint64, error) { return w.bases[r.batch()] + uint64(r.index()), nil })
	if err != nil || len(crashes) == 0 {
		return err
	}
	ids := map[stemKey]uint32{}
	for i, c := range crashes {
		stem, err := w.stems.log.read(c.rec.ref)
		if err != nil {
			return err
		}
		if strings.IndexByte(stem, '\n') >= 0 {
			return fmt.Errorf("crash stem %q contains a newline: %w", stem, ErrUnrepresentable)
		}
		w.crashStems = append(w.crashStems, stem)
		ids[stemKey{c.rec.hash, c.rec.hash2}] = uint32(i + 1)
	}
	w.patch = crashPatch{}
	for _, g := range groups {
		for _, r := range g {
			seq := w.bases[r.batch()] + uint64(r.index())
			w.patch[r.hash] = append(w.patch[r.hash], seqCrash{seq, ids[stemKey{r.hash, r.hash2}]})
		}
	}
	for _, l := range w.patch {
		slices.SortFunc(l, func(a, b seqCrash) int { return cmp.Compare(a.seq, b.seq) })
	}
	return nil
}

// crashPatch gives, for each key hash that several stems share, the crash
// id of each run of its rows, by the run's first row number.
type crashPatch map[uint64][]seqCrash

type seqCrash struct {
	seq uint64
	id  uint32
}

// id is the crash id of the row numbered seq with key hash h.
func (p crashPatch) id(h, seq uint64) uint32 {
	l := p[h]
	i, _ := slices.BinarySearchFunc(l, seq+1, func(c seqCrash, s uint64) int { return cmp.Compare(c.seq, s) })
	if i == 0 {
		return 0
	}
	return l[i-1].id
}

// NStems is the number of distinct stems (see Tables).
func (w *Writer) NStems() uint64 {
	w.Tables()
	return w.nStems
}

// Rows is the number of rows added so far.
func (w *Writer) Rows() uint64 { return w.nRows + uint64(len(w.pending)) }

// Exts returns the extension table so far, by id.
func (w *Writer) Exts() []string { return w.exts }

// CrashStems returns the crash-stem table, by crash id - 1 (see Tables).
func (w *Writer) CrashStems() []string {
	w.Tables()
	return w.crashStems
}

// Contiguous reports whether the rows as written form one run per sample
// (see Tables).
func (w *Writer) Contiguous() bool {
	return w.opts.Contiguous || w.Rows() < 2 || w.runs == w.NStems()
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
	if w.part {
		return errors.New("taridx: Finish of a part's writer (ClosePart writes a part)")
	}
	defer w.release()
	if err := w.Tables(); err != nil {
		w.out.Abort()
		return err
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
	if w.rows != nil {
		w.rows.close()
	}
	w.stems.release()
	w.sorted, w.chunks, w.chunk, w.pending, w.bases = nil, nil, nil, nil, nil
}

func (w *Writer) finish() error {
	head := w.head()
	if w.opts.Contiguous {
		bw := bufio.NewWriterSize(w.out, syswrite.MaxWrite)
		bw.Write(head)
		if err := w.writeSorted(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	if w.rows != nil {
		if err := w.flushChunk(); err != nil {
			return err
		}
		if err := w.rows.close(); err != nil {
			return err
		}
		return w.placeRows(head)
	}
	bufs := net.Buffers{head}
	var seq uint64
	for _, c := range append(w.chunks, w.chunk) {
		w.patchRows(c, seq)
		seq += uint64(len(c) / RecordSize)
		bufs = append(bufs, c)
	}
	_, err := bufs.WriteTo(w.out.File)
	return err
}

// head is the file's header, extension table and crash table.
func (w *Writer) head() []byte {
	extBlock := strings.Join(w.exts, "\n")
	crashBlock := strings.Join(w.crashStems, "\n")
	h := Header{
		Major: Major, Minor: Minor, RecSize: RecordSize, HdrSize: HeaderSize,
		NStems:   w.nStems,
		NRows:    w.nRows,
		NExt:     uint32(len(w.exts)),
		NCrash:   uint32(len(w.crashStems)),
		OffCrash: HeaderSize + uint64(len(extBlock)),
		OffArr:   HeaderSize + uint64(len(extBlock)) + uint64(len(crashBlock)),
	}
	if w.Contiguous() {
		h.Flags |= FlagContiguous
	}
	b, _ := h.MarshalBinary()
	return append(append(b, extBlock...), crashBlock...)
}

// placeRows finishes an output whose rows were written from rowsAt on.
// When the header and tables take just that room (the usual case: no
// new extension after the rows outgrew memory, no crash) they go before
// the rows; else the rows are copied after them, in the kernel, into a
// new temporary file.
func (w *Writer) placeRows(head []byte) error {
	n := int64(w.nRows) * RecordSize
	if int64(len(head)) == w.rowsAt {
		if _, err := w.out.WriteAt(head, 0); err != nil {
			return err
		}
		return w.patchFile(w.out.File, w.rowsAt, n)
	}
	moved, err := safefile.Create(w.out.Target())
	if err != nil {
		return err
	}
	old := w.out
	w.out = moved
	defer old.Abort()
	if _, err := moved.Write(head); err != nil {
		return err
	}
	if _, err := filecopy.Range(moved.File, int64(len(head)), old.File, w.rowsAt, n); err != nil {
		return err
	}
	return w.patchFile(moved.File, int64(len(head)), n)
}

// patchRows gives crash ids to the rows in c, the first numbered seq.
func (w *Writer) patchRows(c []byte, seq uint64) {
	if len(w.patch) == 0 {
		return
	}
	for i := 0; i < len(c); i += RecordSize {
		if h := le.Uint64(c[i+24:]); w.patch[h] != nil {
			le.PutUint32(c[i+20:], w.patch.id(h, seq))
		}
		seq++
	}
}

// patchFile gives crash ids to the n bytes of rows at off in f.
func (w *Writer) patchFile(f *os.File, off, n int64) error {
	if len(w.patch) == 0 {
		return nil
	}
	buf := make([]byte, 1<<20)
	for done := int64(0); done < n; {
		c := buf[:min(int64(len(buf)), n-done)]
		if _, err := f.ReadAt(c, off+done); err != nil {
			return err
		}
		w.patchRows(c, uint64(done/RecordSize))
		if _, err := f.WriteAt(c, off+done); err != nil {
			return err
		}
		done += int64(len(c))
	}
	return nil
}

// writeSorted writes the rows in (keyhash, crashid) order. The rows were
// sorted before the crash ids were known, with every crash id 0; so the
// rows of a key hash that several stems share, adjacent in that order, get
// their crash ids and are sorted again among themselves.
func (w *Writer) writeSorted(out io.Writer) error {
	var b [RecordSize]byte
	var group []seqRow
	write := func(r seqRow) error {
		PutRow(b[:], r.Row)
		_, err := out.Write(b[:])
		return err
	}
	flush := func() error {
		slices.SortFunc(group, compareKeys)
		for _, r := range group {
			if err := write(r); err != nil {
				return err
			}
		}
		group = group[:0]
		return nil
	}
	emit := func(r seqRow) error {
		if len(group) > 0 && r.KeyHash != group[0].KeyHash {
			if err := flush(); err != nil {
				return err
			}
		}
		if w.patch[r.KeyHash] == nil {
			return write(r)
		}
		r.CrashID = w.patch.id(r.KeyHash, r.seq)
		group = append(group, r)
		return nil
	}
	if len(w.sortRuns) > 0 {
		if len(w.sorted) > 0 {
			if err := w.spillRun(); err != nil {
				return err
			}
		}
		if err := w.mergeRuns(emit); err != nil {
			return err
		}
	} else {
		slices.SortFunc(w.sorted, compareKeys)
		for _, r := range w.sorted {
			if err := emit(r); err != nil {
				return err
			}
		}
	}
	return flush()
}

// seqRec is a stem record with the number of its row in the index.
type seqRec[R any] struct {
	seq uint64
	rec R
}

// pickCrashStems picks the stems that take crash ids: each group holds the
// stem records of one key hash (hash2 tells its stems apart, seqOf gives
// a record's row); every stem of a group but the one seen first gets an
// id, in order of its first row. It returns those stems' first records,
// in that order.
func pickCrashStems[R any](groups [][]R, hash2 func(R) uint64, seqOf func(R) (uint64, error)) ([]seqRec[R], error) {
	var crashes []seqRec[R]
	for _, g := range groups {
		firsts := map[uint64]seqRec[R]{} // by hash2
		for _, r := range g {
			seq, err := seqOf(r)
			if err != nil {
				return nil, err
			}
			if f, ok := firsts[hash2(r)]; !ok || seq < f.seq {
				firsts[hash2(r)] = seqRec[R]{seq, r}
			}
		}
		canon := seqRec[R]{seq: math.MaxUint64}
		for _, f := range firsts {
			if f.seq < canon.seq {
				canon = f
			}
		}
		for h2, f := range firsts {
			if h2 != hash2(canon.rec) {
				crashes = append(crashes, f)
			}
		}
	}
	slices.SortFunc(crashes, func(a, b seqRec[R]) int { return cmp.Compare(a.seq, b.seq) })
	return crashes, nil
}
