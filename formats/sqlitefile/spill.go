package sqlitefile

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/itarconv/itarconv/internal/kmerge"
)

// Keys past the budget: with Options.TempFile, the keys that Append
// gathers for the indexes are written out, each index's sorted, as a run
// in a temporary file whenever together they pass Options.Memory; Close
// merges each index's runs as it plans and writes its b-tree (two
// passes), so that memory holds a budget of keys and a buffer per run,
// whatever the rows. The b-trees are those the keys sorted in memory
// would make: the same keys in the same order.

// keyRun is an index's keys, sorted, in the temporary file: each after
// its length (a uvarint), as in the chunks.
type keyRun struct {
	off, size   int64
	n           int
	first, last []byte // its first and last keys
}

// runBuffer is what a run is read through while merged.
const runBuffer = 16 << 10

// spillKeys writes the keys of every index that Append feeds as a run.
func (w *Writer) spillKeys() error {
	for _, t := range w.tables {
		if t.keysFrom != nil {
			continue
		}
		for _, x := range t.idx {
			if err := w.spillIndex(x); err != nil {
				return err
			}
		}
	}
	w.keyBytes = 0
	return nil
}

// spillIndex sorts the keys x holds, writes them as a run and lets them
// go.
func (w *Writer) spillIndex(x *index) error {
	if x.n == 0 {
		return nil
	}
	if w.runs == nil {
		f, err := w.tempFile()
		if err != nil {
			return fmt.Errorf("sqlitefile: a file for the keys past the memory budget: %w", err)
		}
		w.runs = f
	}
	way := x.sortKeys(false)
	w.sorted[way]++
	// One buffer for every run: a fresh one each time would be garbage
	// as large as the keys.
	if w.spillBuf == nil {
		w.spillBuf = bufio.NewWriterSize(nil, 256<<10)
	}
	bw := w.spillBuf
	bw.Reset(io.NewOffsetWriter(w.runs, w.runEnd))
	var size int64
	var lb [10]byte
	var first, last []byte
	each := x.each
	if way == 0 {
		// In order in the chunks, which hold the keys as a run does:
		// written as they are, a chunk at a time.
		each = func(func(ref uint64, r []byte) error) error {
			var end []byte // the last chunk with keys
			for _, ch := range x.chunks {
				if len(ch) == 0 {
					continue
				}
				if first == nil {
					first = append([]byte(nil), record(ch)...)
				}
				end = ch
				if _, err := bw.Write(ch); err != nil {
					return err
				}
				size += int64(len(ch))
			}
			for off := 0; off < len(end); {
				l, k := uvarint(end[off:])
				last = end[off+k : off+k+int(l)]
				off += k + int(l)
			}
			last = append([]byte(nil), last...)
			return nil
		}
	}
	err := each(func(_ uint64, r []byte) error {
		if first == nil {
			first = append([]byte(nil), r...)
		}
		last = append(last[:0], r...)
		k := putUvarint(lb[:], uint64(len(r)))
		bw.Write(lb[:k])
		_, err := bw.Write(r)
		size += int64(k + len(r))
		return err
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return fmt.Errorf("sqlitefile: writing keys past the memory budget to %s: %w", w.runs.Name(), err)
	}
	x.runs = append(x.runs, keyRun{off: w.runEnd, size: size, n: x.n, first: first, last: last})
	x.runFile = w.runs
	w.runEnd += size
	x.spilled += x.n
	// The chunks are used again for the next keys.
	for _, c := range x.chunks {
		x.free = append(x.free, c[:0])
	}
	slices.SortFunc(x.free, func(a, b []byte) int { return cap(a) - cap(b) })
	x.chunks, x.cur, x.tail, x.order, x.n = nil, nil, nil, nil, 0
	x.ordered, x.inOrder, x.nrecent, x.head = true, 0, 0, 0
	return nil
}

// spillRest writes the keys left in memory of the indexes that have runs
// as a last run, before Close builds the b-trees (see merged).
func (w *Writer) spillRest(idx []*index) error {
	for _, x := range idx {
		if len(x.runs) > 0 {
			if err := w.spillIndex(x); err != nil {
				return err
			}
		}
	}
	return nil
}

// merged is the keys of an index with runs (all of them: see spillRest):
// a merge of the runs, in order, kept nowhere but for the keys that
// divide the leaves (as stream keeps them).
func (w *Writer) merged(x *index) (keySource, error) {
	runs, f := x.runs, x.runFile
	return dividerKeys(x.spilled, func(fn func(ref uint64, r []byte) error) error { return mergeRuns(f, runs, fn) }), nil
}

// runCursor reads a run's keys one at a time, in place in its buffer
// (a key longer than the buffer is copied out).
type runCursor struct {
	f    *os.File
	off  int64 // the run's bytes not yet read into buf
	end  int64
	buf  []byte
	pos  int // in buf
	left int // keys
	key  []byte
}

func newRunCursor(f *os.File, r keyRun) *runCursor {
	return &runCursor{f: f, off: r.off, end: r.off + r.size, buf: make([]byte, 0, runBuffer), left: r.n}
}

// fill keeps the bytes of buf not yet parsed and reads more after them,
// at least need in all if the run has them.
func (c *runCursor) fill(need int) error {
	rest := copy(c.buf[:cap(c.buf)], c.buf[c.pos:])
	if need > cap(c.buf) {
		nb := make([]byte, rest, need)
		copy(nb, c.buf[:rest])
		c.buf = nb
	}
	c.buf, c.pos = c.buf[:rest], 0
	n := int(min(int64(cap(c.buf)-rest), c.end-c.off))
	if _, err := c.f.ReadAt(c.buf[rest:rest+n], c.off); err != nil {
		return err
	}
	c.off += int64(n)
	c.buf = c.buf[:rest+n]
	if len(c.buf) < need {
		return io.ErrUnexpectedEOF
	}
	return nil
}

func (c *runCursor) next() (bool, error) {
	if c.left == 0 {
		return false, nil
	}
	c.left--
	if len(c.buf)-c.pos < binary.MaxVarintLen64 && c.off < c.end {
		if err := c.fill(0); err != nil {
			return false, err
		}
	}
	if c.pos >= len(c.buf) {
		return false, io.ErrUnexpectedEOF
	}
	n, k := binary.Uvarint(c.buf[c.pos:])
	if k <= 0 || n > maxLength+64 {
		return false, fmt.Errorf("a key's length is damaged")
	}
	if len(c.buf)-c.pos-k < int(n) {
		if err := c.fill(k + int(n)); err != nil {
			return false, err
		}
	}
	c.key = c.buf[c.pos+k : c.pos+k+int(n)]
	c.pos += k + int(n)
	if cap(c.buf) > runBuffer && c.pos == len(c.buf) {
		c.buf, c.pos = make([]byte, 0, runBuffer), 0 // keep no large buffer
	}
	return true, nil
}

// mergeRuns calls fn with the keys of runs in order (ref 0, r valid
// during the call only): a heap of the runs' cursors by their next key;
// runs in order one after the other (keys that came in order, as a
// tar's paths mostly do) are read one after the other, not merged.
func mergeRuns(f *os.File, runs []keyRun, fn func(ref uint64, r []byte) error) error {
	k := 1
	for k < len(runs) && cmpRecords(runs[k-1].last, runs[k].first, -1) < 0 {
		k++
	}
	if k == len(runs) {
		for _, r := range runs {
			if err := heapMerge(f, []keyRun{r}, fn); err != nil {
				return err
			}
		}
		return nil
	}
	return heapMerge(f, runs, fn)
}

// heapMerge is mergeRuns' general case.
func heapMerge(f *os.File, runs []keyRun, fn func(ref uint64, r []byte) error) error {
	h := make([]*runCursor, 0, len(runs))
	for _, r := range runs {
		c := newRunCursor(f, r)
		ok, err := c.next()
		if err != nil {
			return fmt.Errorf("sqlitefile: reading keys from %s: %w", f.Name(), err)
		}
		if ok {
			h = append(h, c)
		}
	}
	less := func(a, b *runCursor) bool { return cmpRecords(a.key, b.key, -1) < 0 }
	return kmerge.Merge(h, less, func(c *runCursor) error { return fn(0, c.key) }, func(c *runCursor) (bool, error) {
		ok, err := c.next()
		if err != nil {
			return false, fmt.Errorf("sqlitefile: reading keys from %s: %w", f.Name(), err)
		}
		return ok, nil
	})
}

// closeRuns closes and removes the keys' temporary file.
func (w *Writer) closeRuns() {
	if w.runs != nil {
		w.runs.Close()
		os.Remove(w.runs.Name())
		w.runs = nil
	}
}
