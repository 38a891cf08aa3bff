package tarfile

import (
	"fmt"
	"io"
)

// Strategy is how a scan reads header blocks.
type Strategy uint8

const (
	// StrategyAuto picks per read from the member sizes seen so far: one
	// small positioned read per header when members are large, large
	// sequential reads when they are small. It does not map files: mapped
	// pages count in the process's resident memory and, on this kind of
	// workload, save little.
	StrategyAuto Strategy = iota
	// StrategyPread issues one positioned read per header block.
	StrategyPread
	// StrategySequential reads the file in large chunks, payloads included.
	StrategySequential
	// StrategyMmap maps the file and reads headers in place: no copies,
	// one page fault per run of pages. Files only (Open).
	StrategyMmap
)

func (s Strategy) String() string {
	switch s {
	case StrategyPread:
		return "pread"
	case StrategySequential:
		return "sequential"
	case StrategyMmap:
		return "mmap"
	}
	return "auto"
}

// ParseStrategy reads a strategy name as printed by String.
func ParseStrategy(name string) (Strategy, error) {
	for _, s := range []Strategy{StrategyAuto, StrategyPread, StrategySequential, StrategyMmap} {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown read strategy %q (auto, pread, sequential, mmap)", name)
}

const (
	// chunkSize is the read size of sequential reads: large enough that the
	// per-call cost vanishes, small enough to stay in the CPU caches.
	chunkSize = 256 << 10
	// preadStride is the average distance between headers above which a
	// positioned read per header is cheaper than copying the payloads in
	// between: a read call costs about as much as copying 4 KiB (measured
	// with bench/cmd/indexbench on 1-20 KiB and 0-400 byte members).
	preadStride = 4 << 10
	// preadSize is the size of a positioned read: one header block. Reads
	// of a whole page cost a third more, for nothing when members are large.
	preadSize = BlockSize
)

// blockReader serves byte ranges of a file from a window it refills.
type blockReader struct {
	r        io.ReaderAt
	size     int64
	strategy Strategy
	buf      []byte
	bufOff   int64
	stride   int64 // running average distance between headers
	mapped   bool  // buf is the whole file, mapped

	reads, bytes int64
}

func newBlockReader(r io.ReaderAt, size int64, strategy Strategy) *blockReader {
	return &blockReader{r: r, size: size, strategy: strategy, stride: preadStride}
}

// observe records the distance from one header chain to the next.
func (b *blockReader) observe(stride int64) {
	b.stride += (stride - b.stride) / 8
}

// read returns the n bytes at off. The slice is valid until the next call.
// It fails with io.ErrUnexpectedEOF when the file ends before off+n.
func (b *blockReader) read(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off+n > b.size || off+n < off {
		return nil, io.ErrUnexpectedEOF
	}
	if off >= b.bufOff && off+n <= b.bufOff+int64(len(b.buf)) {
		i := off - b.bufOff
		return b.buf[i : i+n], nil
	}
	if b.mapped {
		return nil, io.ErrUnexpectedEOF
	}
	want := int64(chunkSize)
	if b.strategy == StrategyPread || (b.strategy == StrategyAuto && b.stride >= preadStride) {
		want = preadSize
	}
	if want < n {
		// Extension data (pax records, a long name): take the header that
		// follows it in the same read.
		want = n + BlockSize
	}
	if rest := b.size - off; want > rest {
		want = rest
	}
	if int64(cap(b.buf)) < want {
		b.buf = make([]byte, want)
	}
	b.buf = b.buf[:want]
	got, err := b.r.ReadAt(b.buf, off)
	b.reads++
	b.bytes += int64(got)
	if int64(got) < n {
		b.buf, b.bufOff = b.buf[:0], 0
		if err == nil || err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	b.buf, b.bufOff = b.buf[:got], off
	return b.buf[:n], nil
}
