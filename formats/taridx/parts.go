package taridx

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/itarconv/itarconv/internal/filecopy"
	"github.com/itarconv/itarconv/internal/kmerge"
)

// A partitioned index: each task of a run writes its rows into a part
// (CreatePart, ClosePart), and MergeParts writes from the parts, in task
// order, the TARIDX one Writer given every row writes, byte for byte.
//
// A part is what the writer has at its end, before the tables: its rows,
// encoded (extension ids the part's own, crash ids 0), and its stem
// records sorted by (key hash, second hash) in the writer's partitions.
// The second hash is not the per-writer seeded one but partHash2, which
// every task computes alike, so that equal stems of different parts have
// equal records. The merge then costs no pass over the rows in order: the
// rows are copied in the kernel (or, when a part's extension ids or fids
// must change, rewritten in parallel, each part at its place), and the
// stem records are merged partition by partition in parallel, reading the
// parts' sorted records side by side.
//
// A part is one file (PartFile, one sync to write, one name to remove):
// the rows (32 bytes each), the stem records (32 bytes each, partition
// after partition), the stems they locate, the part's description
// (partMeta, JSON), and a 16-byte trailer: the description's length
// (uint64, little-endian) and partMagic.
const (
	// PartFile is the name of a part's file in its directory.
	PartFile   = "taridx.part"
	partMagic  = "TXPART\x00\x01" // its last byte is the layout's version
	partFormat = 1
	// partHash2Seed seeds the second hash of a part's stems.
	partHash2Seed = 0x6974617263_6f6e76 // "itarconv"
	// maxPartMeta bounds a part's description as read.
	maxPartMeta = 16 << 20
)

// ErrPart: a part of a partitioned index is not what CreatePart writes
// (cut short, edited, or of another version).
var ErrPart = errors.New("malformed part of a partitioned index")

// partHash2 is the second hash of a part's stem: xxh64 under a fixed
// seed, which the key hash (xxh64 unseeded) does not share.
func partHash2(stem string) uint64 {
	var d xxhash.Digest
	d.ResetWithSeed(partHash2Seed)
	d.WriteString(stem)
	return d.Sum64()
}

// partMeta describes a part: its rows and runs, its first and last keys
// (rows of one sample across two parts are one run), its extensions by
// id, and how many stem records each partition holds.
type partMeta struct {
	Format  int               `json:"format"`
	Rows    uint64            `json:"rows"`
	Runs    uint64            `json:"runs"`
	First   [2]uint64         `json:"first"`
	Last    [2]uint64         `json:"last"`
	MaxFid  uint16            `json:"max_fid"`
	Exts    [][]byte          `json:"exts"` // bytes: JSON strings would mend invalid UTF-8
	Records [stemParts]uint64 `json:"records"`
	LogSize int64             `json:"stem_log_bytes"`
}

// CreatePart starts a part of a partitioned index in the directory dir.
// Entries come as to a Writer (Add, Prepare and AddBatch); ClosePart
// writes the part. opts.Contiguous is the merge's to apply.
func CreatePart(dir string, opts WriterOptions) (*Writer, error) {
	opts.Contiguous = false
	w, err := Create(filepath.Join(dir, PartFile), opts)
	if err != nil {
		return nil, err
	}
	w.part = true
	w.stems.fixed = true
	return w, nil
}

// ClosePart writes the part a writer of CreatePart holds: its rows, its
// stem records sorted, its stems and its description.
func (w *Writer) ClosePart() error {
	if !w.part {
		return errors.New("taridx: ClosePart of a writer that is no part's")
	}
	if w.finished {
		return errWriterDone
	}
	err := w.flushPending()
	if err == nil {
		if n := w.batches.Load(); n != w.added {
			err = fmt.Errorf("taridx: %d prepared batches, %d added", n, w.added)
		}
	}
	if err == nil {
		err = w.finishPart()
	}
	w.finished = true
	w.release()
	if err != nil {
		w.out.Abort()
		return fmt.Errorf("writing the part %s: %w", filepath.Dir(w.out.Target()), err)
	}
	return w.out.CommitReplace()
}

func (w *Writer) finishPart() error {
	if w.rows != nil {
		if err := w.flushChunk(); err != nil {
			return err
		}
		if err := w.rows.close(); err != nil {
			return err
		}
	} else {
		bufs := net.Buffers(append(w.chunks, w.chunk))
		if _, err := bufs.WriteTo(w.out.File); err != nil {
			return err
		}
	}
	m := &partMeta{Format: partFormat, Rows: w.nRows, Runs: w.runs, MaxFid: w.maxFid,
		First: [2]uint64{w.firstKey.hash, w.firstKey.hash2}, Last: [2]uint64{w.lastKey.hash, w.lastKey.hash2}}
	for _, e := range w.exts {
		m.Exts = append(m.Exts, []byte(e))
	}
	at := int64(w.nRows) * RecordSize
	n, err := w.writePartStems(w.out.File, at, m)
	if err != nil {
		return err
	}
	at += n
	if m.LogSize, err = w.stems.log.writeAt(w.out.File, at); err != nil {
		return err
	}
	at += m.LogSize
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	b = le.AppendUint64(b, uint64(len(b)))
	_, err = w.out.WriteAt(append(b, partMagic...), at)
	return err
}

// writePartStems writes the stem records at off in f, each partition's
// sorted and numbered by row, partitions in order, sorted in parallel,
// and returns their bytes.
func (w *Writer) writePartStems(f *os.File, off int64, m *partMeta) (int64, error) {
	s := w.stems
	var offs [stemParts]int64
	at := off
	for p := range s.parts {
		sp := &s.parts[p]
		n := uint64(len(sp.recs))
		for _, r := range sp.runs {
			n += uint64(r)
		}
		m.Records[p] = n
		offs[p] = at
		at += int64(n) * stemRecSize
	}
	return at - off, forEach(stemParts, 0, func(p int) error {
		sp := &s.parts[p]
		bw := bufio.NewWriterSize(io.NewOffsetWriter(f, offs[p]), 64<<10)
		var b [stemRecSize]byte
		var ferr error
		put := func(r stemRec) {
			r.seq = w.bases[r.batch()] + uint64(r.index())
			putStemRec(b[:], r)
			if _, err := bw.Write(b[:]); err != nil && ferr == nil {
				ferr = err
			}
		}
		if len(sp.runs) == 0 {
			sp.recs, sp.spare = sortStemRecs(sp.recs, sp.spare), nil
			for _, r := range sp.recs {
				put(r)
			}
		} else {
			if len(sp.recs) > 0 {
				if err := sp.spillRun(s.dir); err != nil {
					return err
				}
			}
			if err := mergeStemRuns(sp.spill, sp.runs, put); err != nil {
				return err
			}
		}
		if ferr != nil {
			return ferr
		}
		return bw.Flush()
	})
}

// writeAt writes the log's bytes at off in f, and returns their number.
func (l *stemLog) writeAt(f *os.File, off int64) (int64, error) {
	end := l.end.Load()
	inMem := min(end, l.memLimit)
	for at := int64(0); at < inMem; at += logSegment {
		seg := l.segment(int(at / logSegment))
		if _, err := f.WriteAt(seg[:min(logSegment, inMem-at)], off+at); err != nil {
			return 0, err
		}
	}
	if end > inMem {
		if _, err := filecopy.Range(f, off+inMem, l.file, inMem, end-inMem); err != nil {
			return 0, err
		}
	}
	return end, nil
}

// forEach calls fn(0..n-1) on up to workers goroutines (0: GOMAXPROCS),
// and returns the first error.
func forEach(n, workers int, fn func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				mu.Lock()
				failed := first != nil
				mu.Unlock()
				if failed {
					return
				}
				if err := fn(i); err != nil {
					mu.Lock()
					if first == nil {
						first = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// PartInput is a part to merge: its directory, and the number added to
// its rows' fids (the fold's shards before the part's own, when a task
// numbered its shards from 0).
type PartInput struct {
	Dir     string
	FidBase int
}

// MergeOptions tune MergeParts.
type MergeOptions struct {
	WriterOptions
	// Shards is the number of shards the index addresses: every row's
	// fid (with its part's FidBase) must be below it (0: MaxShards).
	Shards int
	// Workers is how many parts, or stem partitions, are read at once
	// (0: GOMAXPROCS).
	Workers int
}

// openPart is a part being merged.
type openPart struct {
	in   PartInput
	meta partMeta
	f    *os.File // the part's file, open for the whole merge
	path string
	// Where its sections start in f.
	rowsAt, stemsAt, logAt int64
	base                   uint64 // the row number of its first row in the merged index
	remap                  []uint16
	ident                  bool // its extension ids are the merged ones
	offs                   [stemParts]int64
}

func (p *openPart) close() {
	if p.f != nil {
		p.f.Close()
	}
}

// partError locates a problem in a part's file.
func partError(path string, off int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %s: %w", path, off, fmt.Sprintf(format, args...), ErrPart)
}

// open opens the part's file and reads its description, checking the
// sizes it gives against the file's.
func (p *openPart) open(shards int) error {
	p.path = filepath.Join(p.in.Dir, PartFile)
	f, err := os.Open(p.path)
	if err != nil {
		return err
	}
	p.f = f
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	size := fi.Size()
	var tr [16]byte
	if size < int64(len(tr)) {
		return partError(p.path, 0, "%d bytes, too short for a part", size)
	}
	if _, err := f.ReadAt(tr[:], size-16); err != nil {
		return fmt.Errorf("%s: byte %d: %w", p.path, size-16, err)
	}
	n := le.Uint64(tr[:8])
	if string(tr[8:]) != partMagic {
		return partError(p.path, size-8, "not a part of this version of itarconv")
	}
	if n > maxPartMeta || int64(n) > size-16 {
		return partError(p.path, size-16, "a description of %d bytes in a file of %d", n, size)
	}
	metaAt := size - 16 - int64(n)
	b := make([]byte, n)
	if _, err := f.ReadAt(b, metaAt); err != nil {
		return fmt.Errorf("%s: byte %d: %w", p.path, metaAt, err)
	}
	if err := json.Unmarshal(b, &p.meta); err != nil {
		return partError(p.path, metaAt, "%v", err)
	}
	m := &p.meta
	switch {
	case m.Format != partFormat:
		return partError(p.path, metaAt, "part format %d, this itarconv reads %d", m.Format, partFormat)
	case len(m.Exts) > math.MaxUint16+1:
		return partError(p.path, metaAt, "%d extensions", len(m.Exts))
	case m.Rows > 0 && p.in.FidBase+int(m.MaxFid) >= shards:
		return partError(p.path, metaAt, "fid %d (+%d) of an index of %d shards", m.MaxFid, p.in.FidBase, shards)
	case m.Runs > m.Rows || m.Rows > uint64(metaAt)/RecordSize:
		return partError(p.path, metaAt, "%d runs of %d rows in %d bytes", m.Runs, m.Rows, metaAt)
	}
	p.stemsAt = int64(m.Rows) * RecordSize
	var recs uint64
	for i, r := range m.Records {
		if r > uint64(metaAt)/stemRecSize || recs+r > uint64(metaAt)/stemRecSize {
			return partError(p.path, metaAt, "%d stem records in %d bytes", r, metaAt)
		}
		p.offs[i] = p.stemsAt + int64(recs)*stemRecSize
		recs += r
	}
	p.logAt = p.stemsAt + int64(recs)*stemRecSize
	if m.LogSize < 0 || p.logAt+m.LogSize != metaAt {
		return partError(p.path, metaAt, "%d rows, %d stem records and %d bytes of stems, in %d bytes", m.Rows, recs, m.LogSize, metaAt)
	}
	return nil
}

// MergeParts writes at out, from the parts of a partitioned index in
// order, the TARIDX that one Writer given all their entries writes. The
// returned writer is finished (Finish): Commit puts the file in place,
// Abort discards it; its NStems, Exts, CrashStems, Contiguous and Rows
// describe it.
func MergeParts(ctx context.Context, out string, parts []PartInput, opts MergeOptions) (*Writer, error) {
	if opts.Shards <= 0 || opts.Shards > MaxShards {
		opts.Shards = MaxShards
	}
	w, err := Create(out, opts.WriterOptions)
	if err != nil {
		return nil, err
	}
	op := make([]*openPart, len(parts))
	defer func() {
		for _, p := range op {
			if p != nil {
				p.close()
			}
		}
	}()
	fail := func(err error) (*Writer, error) {
		w.Abort()
		return nil, err
	}
	if err := forEach(len(parts), opts.Workers, func(i int) error {
		p := &openPart{in: parts[i]}
		op[i] = p
		return p.open(opts.Shards)
	}); err != nil {
		return fail(err)
	}
	// The extensions in order of first appearance, the rows' places and
	// the runs of one key, as one writer would have counted them.
	var lastKey [2]uint64
	for _, p := range op {
		p.base = w.nRows
		p.ident = true
		for i, e := range p.meta.Exts {
			id, err := w.extID(string(e))
			if err != nil {
				return fail(fmt.Errorf("%s: %w", p.path, err))
			}
			p.remap = append(p.remap, id)
			p.ident = p.ident && int(id) == i
		}
		if p.meta.Rows == 0 {
			continue
		}
		w.runs += p.meta.Runs
		if w.nRows > 0 && p.meta.First == lastKey {
			w.runs--
		}
		lastKey = p.meta.Last
		w.nRows += p.meta.Rows
	}
	// The rows are copied while the stems are joined: they go after the
	// header and the extension table, where they lie unless the join
	// finds stems that share a hash (a crash table before them).
	rowsAt := HeaderSize + int64(len(strings.Join(w.exts, "\n")))
	copied := make(chan error, 1)
	copyCtx, cancelCopy := context.WithCancel(ctx)
	defer cancelCopy()
	if w.opts.Contiguous {
		copied <- nil // sorted at the end, not copied
	} else {
		go func() { copied <- w.copyRows(copyCtx, op, rowsAt) }()
	}
	if err := w.joinParts(ctx, op, opts.Workers); err != nil {
		cancelCopy()
		<-copied
		return fail(err)
	}
	w.joined = true
	if err := w.writeMerged(ctx, op, rowsAt, copied); err != nil {
		return fail(fmt.Errorf("writing %s: %w", out, err))
	}
	w.finished = true
	w.release()
	return w, nil
}

// partRec is a stem record of a part being merged.
type partRec struct {
	stemRec
	part int
}

// joinParts counts the distinct stems of the parts and finds the crashes,
// partition by partition in parallel, merging the parts' sorted records.
func (w *Writer) joinParts(ctx context.Context, op []*openPart, workers int) error {
	var mu sync.Mutex
	var crashes [][]partRec
	var stems uint64
	err := forEach(stemParts, workers, func(sp int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, c, err := joinPartition(op, sp)
		mu.Lock()
		stems += n
		crashes = append(crashes, c...)
		mu.Unlock()
		return err
	})
	if err != nil {
		return err
	}
	w.nStems = stems
	return w.partCrashTable(op, crashes)
}

// partCursor reads one part's records of one partition.
type partCursor struct {
	r    *bufio.Reader
	path string
	at   int64 // the file offset of the next record
	left uint64
	rec  partRec
	b    [stemRecSize]byte
}

func (c *partCursor) next() (bool, error) {
	if c.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(c.r, c.b[:]); err != nil {
		return false, fmt.Errorf("%s: byte %d: %w", c.path, c.at, err)
	}
	r := decodeStemRec(c.b[:])
	if c.at > 0 && compareStemRecs(r, c.rec.stemRec) < 0 {
		return false, partError(c.path, c.at, "stem records out of order")
	}
	c.rec.stemRec = r
	c.at += stemRecSize
	c.left--
	return true, nil
}

// joinPartition merges partition sp of every part.
func joinPartition(op []*openPart, sp int) (stems uint64, crashes [][]partRec, err error) {
	var h []*partCursor
	for i, p := range op {
		n := p.meta.Records[sp]
		if n == 0 {
			continue
		}
		size := int64(n) * stemRecSize
		c := &partCursor{r: bufio.NewReaderSize(io.NewSectionReader(p.f, p.offs[sp], size), int(min(size, 16<<10))),
			path: p.path, at: p.offs[sp], left: n}
		c.rec.part = i
		ok, err := c.next()
		if err != nil {
			return 0, nil, err
		}
		if ok {
			h = append(h, c)
		}
	}
	less := func(a, b *partCursor) bool {
		if c := compareStemRecs(a.rec.stemRec, b.rec.stemRec); c != 0 {
			return c < 0
		}
		return a.rec.part < b.rec.part
	}
	var group []partRec
	crash := false
	flush := func() {
		if crash {
			crashes = append(crashes, slices.Clone(group))
		}
		group, crash = group[:0], false
	}
	visit := func(c *partCursor) error {
		r := c.rec
		if len(group) == 0 || r.hash != group[0].hash {
			flush()
			stems++
		} else if r.hash2 != group[len(group)-1].hash2 {
			stems++
			crash = true
		}
		group = append(group, r)
		return nil
	}
	if err := kmerge.Merge(h, less, visit, (*partCursor).next); err != nil {
		return 0, nil, err
	}
	flush()
	return stems, crashes, nil
}

// partCrashTable is crashTable for the records of parts: crash stems in
// order of their first row in the merged index, read back from their
// part's log.
func (w *Writer) partCrashTable(op []*openPart, groups [][]partRec) error {
	seqOf := func(r partRec) (uint64, error) {
		p := op[r.part]
		if r.seq >= p.meta.Rows {
			return 0, partError(p.path, p.stemsAt, "a stem record of row %d of %d", r.seq, p.meta.Rows)
		}
		return p.base + r.seq, nil
	}
	crashes, err := pickCrashStems(groups, func(r partRec) uint64 { return r.hash2 }, seqOf)
	if err != nil || len(crashes) == 0 {
		return err
	}
	ids := map[stemKey]uint32{}
	for i, c := range crashes {
		p := op[c.rec.part]
		off, n := int64(c.rec.ref>>20), int64(c.rec.ref&(1<<20-1))
		if off+n > p.meta.LogSize {
			return partError(p.path, p.stemsAt, "a stem at %d of %d bytes in a log of %d", off, n, p.meta.LogSize)
		}
		b := make([]byte, n)
		if _, err := p.f.ReadAt(b, p.logAt+off); err != nil {
			return fmt.Errorf("%s: byte %d: %w", p.path, p.logAt+off, err)
		}
		stem := string(b)
		if strings.IndexByte(stem, '\n') >= 0 {
			return fmt.Errorf("crash stem %q contains a newline: %w", stem, ErrUnrepresentable)
		}
		w.crashStems = append(w.crashStems, stem)
		ids[stemKey{c.rec.hash, c.rec.hash2}] = uint32(i + 1)
	}
	w.patch = crashPatch{}
	for _, g := range groups {
		for _, r := range g {
			seq, _ := seqOf(r)
			w.patch[r.hash] = append(w.patch[r.hash], seqCrash{seq, ids[stemKey{r.hash, r.hash2}]})
		}
	}
	for _, l := range w.patch {
		slices.SortFunc(l, func(a, b seqCrash) int { return cmp.Compare(a.seq, b.seq) })
	}
	return nil
}

// writeMerged writes the merged file: the header and tables before the
// rows copyRows put at rowsAt (copied, once it is done), their crash ids
// given in place; with a crash table between, which moves them, each
// part's rows again after it; with Contiguous, the rows sorted as a
// Writer sorts them.
func (w *Writer) writeMerged(ctx context.Context, op []*openPart, rowsAt int64, copied <-chan error) error {
	if err := <-copied; err != nil {
		return err
	}
	if w.opts.Contiguous {
		for _, p := range op {
			if err := p.eachChunk(ctx, func(c []byte, first uint64) error {
				for i := 0; i < len(c); i += RecordSize {
					w.sorted = append(w.sorted, seqRow{DecodeRow(c[i:]), p.base + first + uint64(i/RecordSize)})
					if len(w.sorted)*seqRowSize >= w.opts.SpoolMemory {
						if err := w.spillRun(); err != nil {
							return err
						}
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return w.finish()
	}
	head := w.head()
	if int64(len(head)) != rowsAt {
		if err := w.copyRows(ctx, op, int64(len(head))); err != nil {
			return err
		}
	}
	if err := w.patchFile(w.out.File, int64(len(head)), int64(w.nRows)*RecordSize); err != nil {
		return err
	}
	_, err := w.out.WriteAt(head, 0)
	return err
}

// copyRows writes each part's rows at their place in the merged file, the
// first at at: copied in the kernel where their fids and extension ids
// need no change, else rewritten. One part after the other: writes to one
// file take turns on its lock (ext4's, XFS's), and copies side by side
// would only spin on it.
func (w *Writer) copyRows(ctx context.Context, op []*openPart, at int64) error {
	for _, p := range op {
		dst := at + int64(p.base)*RecordSize
		if p.ident && p.in.FidBase == 0 {
			if _, err := filecopy.RangeContext(ctx, w.out.File, dst, p.f, p.rowsAt, int64(p.meta.Rows)*RecordSize); err != nil {
				return err
			}
			continue
		}
		if err := p.eachChunk(ctx, func(c []byte, first uint64) error {
			_, err := w.out.WriteAt(c, dst+int64(first)*RecordSize)
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// eachChunk hands fn the part's rows a chunk at a time, with the number
// of the chunk's first row in the part, their fids and extension ids
// those of the merged index.
func (p *openPart) eachChunk(ctx context.Context, fn func(c []byte, first uint64) error) error {
	buf := make([]byte, min(int64(p.meta.Rows)*RecordSize, 1<<20))
	n := int64(p.meta.Rows) * RecordSize
	for done := int64(0); done < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		c := buf[:min(int64(len(buf)), n-done)]
		if _, err := p.f.ReadAt(c, p.rowsAt+done); err != nil {
			return fmt.Errorf("%s: byte %d: %w", p.path, p.rowsAt+done, err)
		}
		for i := 0; i < len(c); i += RecordSize {
			if p.in.FidBase != 0 {
				le.PutUint16(c[i:], le.Uint16(c[i:])+uint16(p.in.FidBase))
			}
			if !p.ident {
				ext := le.Uint16(c[i+18:])
				if int(ext) >= len(p.remap) {
					return partError(p.path, p.rowsAt+done+int64(i), "extension %d of %d", ext, len(p.remap))
				}
				le.PutUint16(c[i+18:], p.remap[ext])
			}
		}
		if err := fn(c, uint64(done/RecordSize)); err != nil {
			return err
		}
		done += int64(len(c))
	}
	return nil
}
