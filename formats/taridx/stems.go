package taridx

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/kmerge"
	"github.com/itarconv/itarconv/internal/safefile"
)

// The header's n_stems and crash table need every distinct stem of the
// dataset, which a writer of 10^9 rows cannot hold in memory, nor look up
// one row at a time on the goroutine that keeps the rows in order. So a
// writer keeps, for each run of rows with one stem, a 32-byte record: the
// key hash, a second hash of the stem (seeded per writer), where the run
// starts, and where its stem lies in an append-only log. Records go, from
// whichever goroutine prepared them, into one of stemParts partitions by
// their hash's top bits; a partition past its share of the memory budget
// sorts its records and spills them as a run to a temporary file beside
// the output. At the end the partitions are sorted (merged) in parallel:
// stems that share both hashes are one stem, and a key hash with more than
// one second hash is a crash. Only crashes read their stems back from the
// log. Two different stems with equal key and second hashes (128 bits)
// would count as one: at 10^9 stems, a chance of about 10^-20.

// stemRec is one run of rows with the same stem.
type stemRec struct {
	hash  uint64 // KeyHash(stem)
	hash2 uint64 // maphash of the stem under the writer's seed
	seq   uint64 // batch<<32 | index of the run's first entry in its batch
	ref   uint64 // the stem in the log: offset<<20 | length
}

const (
	stemParts     = 64
	stemPartShift = 64 - 6
	stemRecSize   = 32
	// logSegment is the unit of the in-memory part of the stem log.
	logSegment = 1 << 20
)

func (r stemRec) batch() uint32 { return uint32(r.seq >> 32) }
func (r stemRec) index() uint32 { return uint32(r.seq) }

func compareStemRecs(a, b stemRec) int {
	if c := cmp.Compare(a.hash, b.hash); c != 0 {
		return c
	}
	return cmp.Compare(a.hash2, b.hash2)
}

func putStemRec(b []byte, r stemRec) {
	le := binary.LittleEndian
	le.PutUint64(b[0:], r.hash)
	le.PutUint64(b[8:], r.hash2)
	le.PutUint64(b[16:], r.seq)
	le.PutUint64(b[24:], r.ref)
}

func decodeStemRec(b []byte) stemRec {
	le := binary.LittleEndian
	return stemRec{le.Uint64(b[0:]), le.Uint64(b[8:]), le.Uint64(b[16:]), le.Uint64(b[24:])}
}

// stemSet gathers a writer's stem records; safe for concurrent use until
// join.
type stemSet struct {
	dir      string // where spill files go: beside the output
	seed     maphash.Seed
	fixed    bool // hash2 is partHash2: a part's, alike in every task
	partRecs int  // records a partition holds before it spills a run
	parts    [stemParts]stemPart
	log      stemLog
	pool     sync.Pool // *[]stemRec scratch for scattering a batch
}

type stemPart struct {
	mu    sync.Mutex
	recs  []stemRec
	spare []stemRec // for sorting recs into
	spill *os.File  // sorted runs, unnamed
	runs  []int64   // records in each run, in file order
}

// newStemSet divides memory: an eighth for the log's first stems (read
// back only for crashes, so little is gained by keeping more), the rest
// for the partitions' records, half of it to sort them into.
func newStemSet(dir string, memory int) *stemSet {
	return &stemSet{
		dir:      dir,
		seed:     maphash.MakeSeed(),
		partRecs: max(memory*7/8/2/stemParts/stemRecSize, 64),
		log:      stemLog{dir: dir, memLimit: int64(max(memory/8/logSegment, 1)) * logSegment},
	}
}

// hash2 is the stem's second hash.
func (s *stemSet) hash2(stem string) uint64 {
	if s.fixed {
		return partHash2(stem)
	}
	return maphash.String(s.seed, stem)
}

// add logs the stems (stems[r.ref's offset...], refs relative to stems)
// and files the records in their partitions.
func (s *stemSet) add(recs []stemRec, stems []byte) error {
	if len(recs) == 0 {
		return nil
	}
	base, err := s.log.append(stems)
	if err != nil {
		return err
	}
	var counts [stemParts + 1]int
	for i := range recs {
		recs[i].ref += uint64(base) << 20
		counts[recs[i].hash>>stemPartShift+1]++
	}
	for p := 1; p <= stemParts; p++ {
		counts[p] += counts[p-1]
	}
	sp, _ := s.pool.Get().(*[]stemRec)
	if sp == nil {
		sp = new([]stemRec)
	}
	scattered := slices.Grow((*sp)[:0], len(recs))[:len(recs)]
	next := counts
	for _, r := range recs {
		p := r.hash >> stemPartShift
		scattered[next[p]] = r
		next[p]++
	}
	for p := range stemParts {
		if counts[p] == counts[p+1] {
			continue
		}
		if err := s.parts[p].add(scattered[counts[p]:counts[p+1]], s.partRecs, s.dir); err != nil {
			return err
		}
	}
	*sp = scattered
	s.pool.Put(sp)
	return nil
}

func (p *stemPart) add(recs []stemRec, limit int, dir string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.recs = append(p.recs, recs...)
	if len(p.recs) < limit {
		return nil
	}
	return p.spillRun(dir)
}

// sortStemRecs sorts records in (hash, hash2) order into scratch (grown
// as needed) and returns it. The hashes are uniform: one counting pass on
// the bits below the partition's deals them into buckets of a few records
// each, which insertion sort finishes (a bucket of many records, the same
// stem in many places, is sorted by comparisons); a comparison sort of
// all took a tenth of an index's time.
func sortStemRecs(recs, scratch []stemRec) []stemRec {
	if len(recs) < 64 {
		slices.SortFunc(recs, compareStemRecs)
		return recs
	}
	bits := min(bitsLen(uint(len(recs)/4)), 20)
	shift := stemPartShift - bits
	mask := uint64(1)<<bits - 1
	counts := make([]int, 1<<bits+1)
	for _, r := range recs {
		counts[(r.hash>>shift)&mask+1]++
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	next := append([]int(nil), counts[:len(counts)-1]...)
	out := slices.Grow(scratch[:0], len(recs))[:len(recs)]
	for _, r := range recs {
		b := (r.hash >> shift) & mask
		out[next[b]] = r
		next[b]++
	}
	for b := 0; b+1 < len(counts); b++ {
		bucket := out[counts[b]:counts[b+1]]
		if len(bucket) > 32 {
			slices.SortFunc(bucket, compareStemRecs)
			continue
		}
		for i := 1; i < len(bucket); i++ {
			for j := i; j > 0 && compareStemRecs(bucket[j], bucket[j-1]) < 0; j-- {
				bucket[j], bucket[j-1] = bucket[j-1], bucket[j]
			}
		}
	}
	return out
}

func bitsLen(n uint) int {
	b := 0
	for ; n > 1; n >>= 1 {
		b++
	}
	return b
}

// spillRun sorts the partition's records and appends them to its spill
// file as one run.
func (p *stemPart) spillRun(dir string) error {
	sorted := sortStemRecs(p.recs, p.spare)
	if &sorted[0] != &p.recs[0] {
		p.recs, p.spare = sorted, p.recs
	}
	if p.spill == nil {
		f, err := safefile.Scratch(dir, "stems")
		if err != nil {
			return err
		}
		p.spill = f
	}
	bw := bufio.NewWriterSize(p.spill, 32<<10)
	var b [stemRecSize]byte
	for _, r := range p.recs {
		putStemRec(b[:], r)
		bw.Write(b[:])
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	p.runs = append(p.runs, int64(len(p.recs)))
	p.recs = p.recs[:0]
	return nil
}

// release frees the records and closes the spill files.
func (s *stemSet) release() {
	for i := range s.parts {
		p := &s.parts[i]
		if p.spill != nil {
			p.spill.Close()
			p.spill = nil
		}
		p.recs, p.spare = nil, nil
	}
	s.log.release()
}

// joined is what join finds: the number of distinct stems, and the
// records of every key hash that more than one stem has.
type joined struct {
	stems   uint64
	crashes [][]stemRec // a group per key hash, in no particular order
}

// join counts the distinct stems and finds the crashes, partitions in
// parallel. The set takes no more records afterwards.
func (s *stemSet) join() (joined, error) {
	var (
		mu    sync.Mutex
		total joined
		errs  []error
		next  atomic.Int32
		wg    sync.WaitGroup
	)
	for range min(runtime.GOMAXPROCS(0), stemParts) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				p := int(next.Add(1)) - 1
				if p >= stemParts {
					return
				}
				j, err := s.parts[p].join(s.dir)
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				total.stems += j.stems
				total.crashes = append(total.crashes, j.crashes...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return total, errors.Join(errs...)
}

// join walks the partition's records in (hash, hash2) order.
func (p *stemPart) join(dir string) (joined, error) {
	var j joined
	var group []stemRec // the current key hash's records
	crash := false
	flush := func() {
		if crash {
			j.crashes = append(j.crashes, slices.Clone(group))
		}
		group, crash = group[:0], false
	}
	visit := func(r stemRec) {
		if len(group) == 0 || r.hash != group[0].hash {
			flush()
			j.stems++
		} else if r.hash2 != group[len(group)-1].hash2 {
			j.stems++
			crash = true
		}
		group = append(group, r)
	}
	if len(p.runs) == 0 {
		p.recs, p.spare = sortStemRecs(p.recs, p.spare), nil
		for _, r := range p.recs {
			visit(r)
		}
		flush()
		return j, nil
	}
	if len(p.recs) > 0 {
		if err := p.spillRun(dir); err != nil {
			return j, err
		}
	}
	err := mergeStemRuns(p.spill, p.runs, visit)
	flush()
	return j, err
}

// mergeStemRuns calls visit with the records of the sorted runs in f, in
// (hash, hash2) order.
func mergeStemRuns(f *os.File, runs []int64, visit func(stemRec)) error {
	h := make([]*stemCursor, 0, len(runs))
	var start int64
	for _, n := range runs {
		c := &stemCursor{r: bufio.NewReaderSize(io.NewSectionReader(f, start*stemRecSize, n*stemRecSize), 64<<10), left: n}
		start += n
		ok, err := c.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, c)
		}
	}
	less := func(a, b *stemCursor) bool { return compareStemRecs(a.rec, b.rec) < 0 }
	return kmerge.Merge(h, less, func(c *stemCursor) error { visit(c.rec); return nil }, (*stemCursor).next)
}

type stemCursor struct {
	r    *bufio.Reader
	left int64
	rec  stemRec
	b    [stemRecSize]byte
}

func (c *stemCursor) next() (bool, error) {
	if c.left == 0 {
		return false, nil
	}
	if _, err := io.ReadFull(c.r, c.b[:]); err != nil {
		return false, fmt.Errorf("reading back spilled stems: %w", err)
	}
	c.rec, c.left = decodeStemRec(c.b[:]), c.left-1
	return true, nil
}

// stemLog holds the stems of the records, appended by any goroutine: the
// first memLimit bytes in memory, the rest in a temporary file.
type stemLog struct {
	dir      string
	memLimit int64
	end      atomic.Int64
	mu       sync.Mutex
	segs     [][]byte
	file     *os.File
	fileErr  error
}

// append stores b and returns its offset in the log.
func (l *stemLog) append(b []byte) (int64, error) {
	off := l.end.Add(int64(len(b))) - int64(len(b))
	if off+int64(len(b)) >= 1<<44 {
		return 0, errors.New("more than 16 TiB of stems")
	}
	n := 0
	for n < len(b) && off+int64(n) < l.memLimit {
		at := off + int64(n)
		n += copy(l.segment(int(at / logSegment))[at%logSegment:], b[n:])
	}
	if n == len(b) {
		return off, nil
	}
	f, err := l.spill()
	if err != nil {
		return 0, err
	}
	_, err = f.WriteAt(b[n:], off+int64(n))
	return off, err
}

// segment returns the in-memory segment i, allocating it on first use.
// Appends copy into disjoint ranges, so only the table needs the lock.
func (l *stemLog) segment(i int) []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	for len(l.segs) <= i {
		l.segs = append(l.segs, nil)
	}
	if l.segs[i] == nil {
		l.segs[i] = make([]byte, logSegment)
	}
	return l.segs[i]
}

func (l *stemLog) spill() (*os.File, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.file == nil && l.fileErr == nil {
		l.file, l.fileErr = safefile.Scratch(l.dir, "stemlog")
	}
	return l.file, l.fileErr
}

// read returns the stem ref locates.
func (l *stemLog) read(ref uint64) (string, error) {
	off, n := int64(ref>>20), int(ref&(1<<20-1))
	b := make([]byte, n)
	i := 0
	for i < n && off+int64(i) < l.memLimit {
		at := off + int64(i)
		i += copy(b[i:], l.segment(int(at / logSegment))[at%logSegment:])
	}
	if i < n {
		if _, err := l.file.ReadAt(b[i:], off+int64(i)); err != nil {
			return "", fmt.Errorf("reading back a stem: %w", err)
		}
	}
	return string(b), nil
}

func (l *stemLog) release() {
	if l.file != nil {
		l.file.Close()
		l.file = nil
	}
	l.segs = nil
}
