package barecat

import (
	"bufio"
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// fileLog is what the Writer must find again of the files it added, by
// path: a hash of the path and where the bytes are (for AddLink, and to
// tell a file from a directory). It keeps the latest entries in memory,
// up to a budget, and the older ones in runs in a temporary file beside
// the archive, sorted by hash when a lookup first needs them (most
// Writers make none past the filter): memory does not grow with the
// number of files. The index itself (sqlitefile) keeps no lookup: its
// b-trees are written at Close.
//
// A path is known by a 64-bit hash (maphash, seeded per Writer): two
// paths of an archive of 10^9 files share one with odds of 10^-10 for a
// given lookup, and a lookup that matched another file's hash would take
// that file's bytes for a link, or refuse a directory. Repeated paths are
// found exactly, by the index's UNIQUE constraint at Close.
type fileLog struct {
	dir, base string
	limit     int        // entries kept in memory before a spill
	mem       []logEntry // the latest entries, in the order they came
	// byHash indexes mem[:mapped] by hash, built only when a lookup
	// asks (most runs make none).
	byHash map[uint64]int32
	mapped int
	f      *os.File // the runs, once spilled
	runs   []logRun
	buf    []byte
}

// logEntry is one file: its path's hash and its bytes' place.
type logEntry struct {
	hash   uint64
	offset int64
	size   int64
	shard  int32
	crc    uint32
	hasCRC bool
}

// logEntrySize is a logEntry's size in a run.
const logEntrySize = 8 + 8 + 8 + 4 + 4 + 1

// logBlock entries of a run are read at once: the run's sparse index
// keeps the first hash of each block.
const logBlock = 128

// logRun is entries in the file: as they came, until a lookup needs
// them sorted by hash (most runs see no lookup: sorting waits for one).
type logRun struct {
	off    int64    // where the run starts in the file
	n      int      // entries
	sorted bool     // by hash, the latest of one hash last
	first  []uint64 // once sorted, the first hash of each block
	level  int      // merges it went through (see compact)
}

// logFanout runs of a level are merged into one of the next (see
// compact): a lookup reads a block of at most logFanout runs a level.
const logFanout = 16

func newFileLog(dir, base string, budget int64) *fileLog {
	return &fileLog{dir: dir, base: base, limit: int(max(budget/48, 1024))}
}

// add logs a file.
func (l *fileLog) add(e logEntry) error {
	l.mem = append(l.mem, e)
	if len(l.mem) >= l.limit {
		return l.spill()
	}
	return nil
}

// spill writes the entries in memory as a run, as they came.
func (l *fileLog) spill() error {
	if len(l.mem) == 0 {
		return nil
	}
	if l.f == nil {
		f, err := os.CreateTemp(l.dir, safefile.TempName(l.base+"-files"))
		if err != nil {
			return err
		}
		l.f = f
	}
	off, err := l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	r := logRun{off: off, n: len(l.mem)}
	b := l.buf[:0]
	for _, e := range l.mem {
		b = appendEntry(b, e)
		if len(b) >= syswrite.MaxWrite {
			if _, err := l.f.Write(b); err != nil {
				return err
			}
			b = b[:0]
		}
	}
	if _, err := l.f.Write(b); err != nil {
		return err
	}
	l.buf = b[:0]
	l.runs = append(l.runs, r)
	l.mem, l.byHash, l.mapped = l.mem[:0], nil, 0
	return nil
}

func appendEntry(b []byte, e logEntry) []byte {
	b = binary.LittleEndian.AppendUint64(b, e.hash)
	b = binary.LittleEndian.AppendUint64(b, uint64(e.offset))
	b = binary.LittleEndian.AppendUint64(b, uint64(e.size))
	b = binary.LittleEndian.AppendUint32(b, uint32(e.shard))
	b = binary.LittleEndian.AppendUint32(b, e.crc)
	c := byte(0)
	if e.hasCRC {
		c = 1
	}
	return append(b, c)
}

func readEntry(b []byte) logEntry {
	return logEntry{
		hash:   binary.LittleEndian.Uint64(b),
		offset: int64(binary.LittleEndian.Uint64(b[8:])),
		size:   int64(binary.LittleEndian.Uint64(b[16:])),
		shard:  int32(binary.LittleEndian.Uint32(b[24:])),
		crc:    binary.LittleEndian.Uint32(b[28:]),
		hasCRC: b[32] == 1,
	}
}

// find gives the latest file of hash h.
func (l *fileLog) find(h uint64) (logEntry, bool, error) {
	if len(l.mem) > 0 {
		if l.byHash == nil {
			l.byHash = make(map[uint64]int32)
		}
		for ; l.mapped < len(l.mem); l.mapped++ {
			l.byHash[l.mem[l.mapped].hash] = int32(l.mapped)
		}
		if i, ok := l.byHash[h]; ok {
			return l.mem[i], true, nil
		}
	}
	for k := range l.runs {
		if !l.runs[k].sorted {
			if err := l.sortRun(&l.runs[k]); err != nil {
				return logEntry{}, false, err
			}
		}
	}
	if err := l.compact(); err != nil {
		return logEntry{}, false, err
	}
	for k := len(l.runs) - 1; k >= 0; k-- {
		e, ok, err := l.findIn(&l.runs[k], h)
		if err != nil || ok {
			return e, ok, err
		}
	}
	return logEntry{}, false, nil
}

// compact merges the last logFanout runs while they are of one level
// into one run of the next, written after the others (the file keeps
// the space of the runs merged): runs go up a level each time logFanout
// of them are there, so each entry is merged a few times in all and a
// lookup reads at most logFanout runs a level.
func (l *fileLog) compact() error {
	for n := len(l.runs); n >= logFanout; n = len(l.runs) {
		tail := l.runs[n-logFanout:]
		lv := tail[0].level
		for _, r := range tail {
			if r.level != lv {
				return nil
			}
		}
		merged, err := l.merge(tail)
		if err != nil {
			return err
		}
		merged.level = lv + 1
		l.runs = append(l.runs[:n-logFanout], merged)
	}
	return nil
}

// merge writes sorted runs, oldest first, as one sorted run at the end
// of the file: of entries with one hash, those of a later run after.
func (l *fileLog) merge(runs []logRun) (logRun, error) {
	off, err := l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return logRun{}, err
	}
	type cursor struct {
		rd   *bufio.Reader
		left int
		e    [logEntrySize]byte
		run  int
	}
	var cs []*cursor
	out := logRun{off: off, sorted: true}
	next := func(c *cursor) (bool, error) {
		if c.left == 0 {
			return false, nil
		}
		c.left--
		_, err := io.ReadFull(c.rd, c.e[:])
		return err == nil, err
	}
	for i, r := range runs {
		c := &cursor{rd: bufio.NewReaderSize(io.NewSectionReader(l.f, r.off, int64(r.n*logEntrySize)), 64<<10), left: r.n, run: i}
		ok, err := next(c)
		if err != nil {
			return logRun{}, fmt.Errorf("reading %s: %w", l.f.Name(), err)
		}
		if ok {
			cs = append(cs, c)
		}
		out.n += r.n
	}
	bw := bufio.NewWriterSize(io.NewOffsetWriter(l.f, off), syswrite.MaxWrite)
	key := func(c *cursor) uint64 { return binary.LittleEndian.Uint64(c.e[:]) }
	for i := 0; len(cs) > 0; i++ {
		// The least hash, of the oldest run among equals: a linear pick
		// among at most logFanout cursors.
		m := 0
		for j := 1; j < len(cs); j++ {
			if k, km := key(cs[j]), key(cs[m]); k < km || k == km && cs[j].run < cs[m].run {
				m = j
			}
		}
		c := cs[m]
		if i%logBlock == 0 {
			out.first = append(out.first, key(c))
		}
		bw.Write(c.e[:])
		ok, err := next(c)
		if err != nil {
			return logRun{}, fmt.Errorf("reading %s: %w", l.f.Name(), err)
		}
		if !ok {
			cs = append(cs[:m], cs[m+1:]...)
		}
	}
	if err := bw.Flush(); err != nil {
		return logRun{}, fmt.Errorf("writing %s: %w", l.f.Name(), err)
	}
	return out, nil
}

// sortRun sorts a run by hash in place, the latest entry of a hash last,
// and indexes its blocks.
func (l *fileLog) sortRun(r *logRun) error {
	b := make([]byte, r.n*logEntrySize)
	if _, err := l.f.ReadAt(b, r.off); err != nil {
		return fmt.Errorf("reading %s: %w", l.f.Name(), err)
	}
	type ent struct {
		hash uint64
		at   int32
	}
	ents := make([]ent, r.n)
	for i := range ents {
		ents[i] = ent{binary.LittleEndian.Uint64(b[i*logEntrySize:]), int32(i)}
	}
	slices.SortFunc(ents, func(x, y ent) int {
		if c := cmp.Compare(x.hash, y.hash); c != 0 {
			return c
		}
		return cmp.Compare(x.at, y.at)
	})
	out := make([]byte, 0, len(b))
	r.first = r.first[:0]
	for i, e := range ents {
		if i%logBlock == 0 {
			r.first = append(r.first, e.hash)
		}
		out = append(out, b[int(e.at)*logEntrySize:(int(e.at)+1)*logEntrySize]...)
	}
	if _, err := l.f.WriteAt(out, r.off); err != nil {
		return fmt.Errorf("writing %s: %w", l.f.Name(), err)
	}
	r.sorted = true
	return nil
}

// findIn looks h up in a sorted run: the last entry of hash h, in the last
// block whose first hash is not above h (and the block before, where the
// entries of h may start).
func (l *fileLog) findIn(r *logRun, h uint64) (logEntry, bool, error) {
	blk := sort.Search(len(r.first), func(i int) bool { return r.first[i] > h }) - 1
	if blk < 0 {
		return logEntry{}, false, nil
	}
	for ; blk >= 0; blk-- {
		n := min(logBlock, r.n-blk*logBlock)
		b := make([]byte, n*logEntrySize)
		if _, err := l.f.ReadAt(b, r.off+int64(blk*logBlock*logEntrySize)); err != nil {
			return logEntry{}, false, fmt.Errorf("reading %s: %w", l.f.Name(), err)
		}
		for i := n - 1; i >= 0; i-- {
			if e := readEntry(b[i*logEntrySize:]); e.hash == h {
				return e, true, nil
			}
		}
		if r.first[blk] != h {
			break
		}
	}
	return logEntry{}, false, nil
}

// scan calls f with the hash of every file, in no order.
func (l *fileLog) scan(f func(h uint64)) error {
	buf := make([]byte, logBlock*logEntrySize*64)
	for k := range l.runs {
		r := &l.runs[k]
		for read := 0; read < r.n; {
			n := min(len(buf)/logEntrySize, r.n-read)
			b := buf[:n*logEntrySize]
			if _, err := l.f.ReadAt(b, r.off+int64(read*logEntrySize)); err != nil {
				return fmt.Errorf("reading %s: %w", l.f.Name(), err)
			}
			for i := 0; i < len(b); i += logEntrySize {
				f(binary.LittleEndian.Uint64(b[i:]))
			}
			read += n
		}
	}
	for _, e := range l.mem {
		f(e.hash)
	}
	return nil
}

// close removes the runs' file.
func (l *fileLog) close() {
	if l.f != nil {
		l.f.Close()
		os.Remove(l.f.Name())
		l.f = nil
	}
	l.mem, l.byHash, l.runs = nil, nil, nil
}

// hashSet is a set of hashes, open addressing: a lookup costs a probe or
// two, for scans of the whole log.
type hashSet struct {
	slots []uint64 // 0: empty
	zero  bool     // 0 is in the set
	mask  uint64
}

func newHashSet(hs []uint64) *hashSet {
	n := 16
	for n < 2*len(hs) {
		n *= 2
	}
	s := &hashSet{slots: make([]uint64, n), mask: uint64(n - 1)}
	for _, h := range hs {
		if h == 0 {
			s.zero = true
			continue
		}
		i := mix64(h) & s.mask
		for s.slots[i] != 0 && s.slots[i] != h {
			i = (i + 1) & s.mask
		}
		s.slots[i] = h
	}
	return s
}

func (s *hashSet) has(h uint64) bool {
	if h == 0 {
		return s.zero
	}
	for i := mix64(h) & s.mask; ; i = (i + 1) & s.mask {
		switch s.slots[i] {
		case h:
			return true
		case 0:
			return false
		}
	}
}

// mix64 spreads a hash's bits over its low ones (maphash's are already
// spread; this keeps a set of other hashes fair).
func mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	return h ^ h>>33
}
