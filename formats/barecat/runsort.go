package barecat

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/itarconv/itarconv/internal/kmerge"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// runSorter sorts records (byte strings) that may not fit in memory:
// they are kept up to a budget, then written, sorted, as a run to a
// temporary file beside the archive; each merges the runs. Records that
// compare equal come out in the order they were added.
type runSorter struct {
	cmp       func(a, b []byte) int
	dir, name string
	budget    int
	mem       [][]byte
	memBytes  int
	f         *os.File
	end       int64
	runs      []sortedRun
}

type sortedRun struct {
	off, size int64
	n         int
}

func newRunSorter(dir, name string, budget int64, cmp func(a, b []byte) int) *runSorter {
	return &runSorter{cmp: cmp, dir: dir, name: name, budget: int(max(budget, 64<<10))}
}

// add adds a copy of rec.
func (s *runSorter) add(rec []byte) error {
	s.mem = append(s.mem, append([]byte(nil), rec...))
	s.memBytes += len(rec) + 24
	if s.memBytes > s.budget {
		return s.spill()
	}
	return nil
}

// spill writes the records in memory as a run.
func (s *runSorter) spill() error {
	if len(s.mem) == 0 {
		return nil
	}
	if s.f == nil {
		f, err := os.CreateTemp(s.dir, safefile.TempName(s.name))
		if err != nil {
			return err
		}
		s.f = f
	}
	slices.SortStableFunc(s.mem, s.cmp)
	bw := bufio.NewWriterSize(io.NewOffsetWriter(s.f, s.end), syswrite.MaxWrite)
	var size int64
	var lb [binary.MaxVarintLen64]byte
	for _, r := range s.mem {
		k := binary.PutUvarint(lb[:], uint64(len(r)))
		bw.Write(lb[:k])
		bw.Write(r)
		size += int64(k + len(r))
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing %s: %w", s.f.Name(), err)
	}
	s.runs = append(s.runs, sortedRun{off: s.end, size: size, n: len(s.mem)})
	s.end += size
	clear(s.mem)
	s.mem, s.memBytes = s.mem[:0], 0
	return nil
}

// each calls fn with every record in order (rec valid during the call
// only). It may be called again.
func (s *runSorter) each(fn func(rec []byte) error) error {
	slices.SortStableFunc(s.mem, s.cmp)
	type cursor struct {
		rd   *bufio.Reader
		left int
		rec  []byte
		run  int // older runs first among equals; memory last
		mem  [][]byte
	}
	next := func(c *cursor) (bool, error) {
		if c.rd == nil {
			if len(c.mem) == 0 {
				return false, nil
			}
			c.rec, c.mem = c.mem[0], c.mem[1:]
			return true, nil
		}
		if c.left == 0 {
			return false, nil
		}
		c.left--
		n, err := binary.ReadUvarint(c.rd)
		if err != nil {
			return false, err
		}
		if n > 1<<30 {
			return false, fmt.Errorf("a record of %d bytes", n)
		}
		if uint64(cap(c.rec)) < n {
			c.rec = make([]byte, n)
		}
		c.rec = c.rec[:n]
		_, err = io.ReadFull(c.rd, c.rec)
		return err == nil, err
	}
	var h []*cursor
	add := func(c *cursor) error {
		ok, err := next(c)
		if err != nil {
			return fmt.Errorf("reading %s: %w", s.f.Name(), err)
		}
		if ok {
			h = append(h, c)
		}
		return nil
	}
	for i, r := range s.runs {
		if err := add(&cursor{rd: bufio.NewReaderSize(io.NewSectionReader(s.f, r.off, r.size), 32<<10), left: r.n, run: i}); err != nil {
			return err
		}
	}
	if err := add(&cursor{mem: s.mem, run: len(s.runs)}); err != nil {
		return err
	}
	less := func(a, b *cursor) bool {
		c := s.cmp(a.rec, b.rec)
		return c < 0 || c == 0 && a.run < b.run
	}
	return kmerge.Merge(h, less, func(c *cursor) error { return fn(c.rec) }, func(c *cursor) (bool, error) {
		ok, err := next(c)
		if err != nil {
			return false, fmt.Errorf("reading %s: %w", s.f.Name(), err)
		}
		return ok, nil
	})
}

// close removes the runs' file.
func (s *runSorter) close() {
	if s.f != nil {
		s.f.Close()
		os.Remove(s.f.Name())
		s.f = nil
	}
	s.mem, s.runs = nil, nil
}
