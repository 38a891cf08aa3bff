package barecat

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"

	"github.com/itarconv/itarconv/internal/safefile"
)

// fileLog is what the Writer must find again of the files it added, by
// path: a hash of the path and where the bytes are (for AddLink, and to
// tell a file from a directory). It keeps the latest entries in memory,
// up to a budget, and the older ones in runs sorted by hash in a
// temporary file beside the archive: memory does not grow with the
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

// logRun is entries in the file, sorted by hash.
type logRun struct {
	off   int64    // where the run starts in the file
	n     int      // entries
	first []uint64 // the first hash of each block
}

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

// spill writes the entries in memory as a run.
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
	// Stable: of entries with one hash, the latest is the last.
	slices.SortStableFunc(l.mem, func(a, b logEntry) int { return cmp.Compare(a.hash, b.hash) })
	off, err := l.f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	r := logRun{off: off, n: len(l.mem)}
	b := l.buf[:0]
	for i, e := range l.mem {
		if i%logBlock == 0 {
			r.first = append(r.first, e.hash)
		}
		b = appendEntry(b, e)
		if len(b) >= 1<<20 {
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
	for k := len(l.runs) - 1; k >= 0; k-- {
		e, ok, err := l.findIn(&l.runs[k], h)
		if err != nil || ok {
			return e, ok, err
		}
	}
	return logEntry{}, false, nil
}

// findIn looks h up in a run: the last entry of hash h, in the last
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

// each calls f with the hashes of every file, each run (and the entries in
// memory, sorted) in hash order in turn: for a merge with sorted hashes.
func (l *fileLog) eachRun(f func(next func() (uint64, bool, error)) error) error {
	for k := range l.runs {
		r := &l.runs[k]
		buf := make([]byte, 0, logBlock*logEntrySize*64)
		read, pos := 0, 0
		next := func() (uint64, bool, error) {
			if pos == len(buf) {
				if read == r.n {
					return 0, false, nil
				}
				n := min(cap(buf)/logEntrySize, r.n-read)
				buf = buf[:n*logEntrySize]
				if _, err := l.f.ReadAt(buf, r.off+int64(read*logEntrySize)); err != nil {
					return 0, false, fmt.Errorf("reading %s: %w", l.f.Name(), err)
				}
				read += n
				pos = 0
			}
			h := binary.LittleEndian.Uint64(buf[pos:])
			pos += logEntrySize
			return h, true, nil
		}
		if err := f(next); err != nil {
			return err
		}
	}
	hs := make([]uint64, len(l.mem))
	for i, e := range l.mem {
		hs[i] = e.hash
	}
	slices.Sort(hs)
	i := 0
	return f(func() (uint64, bool, error) {
		if i == len(hs) {
			return 0, false, nil
		}
		i++
		return hs[i-1], true, nil
	})
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
