package tbl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/mapped"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// A converter with many samples must not do a sample's work on the one
// goroutine that sees them in order: that goroutine would be the limit
// however many cores the rest uses. So a run of consecutive samples is
// made ready on any goroutine (a run), the ordered writer only gives it
// its place, a few additions (Writer.place), and placer goroutines then
// write its index entries, bytes and metadata blocks where they go, with
// positioned writes, several runs at once. Nothing is kept a sample:
// the index is written in place, and the metadata section, which
// follows the data and so has no place until the end, is held in memory
// up to WriterOptions.SpoolMemory and otherwise written to a temporary
// file beside the output, copied after the data by Close.

// run is consecutive samples ready to be placed: their index entries,
// offsets counted from the run's first stored byte, their stored bytes
// in pieces written back to back, and their metadata blocks, numbered
// from the run's first sample.
type run struct {
	n       int      // samples
	idx     []byte   // n index entries
	pieces  [][]byte // the stored bytes
	dataLen int64    // of the pieces
	meta    []byte   // metadata blocks
	flags   uint32   // header flags its samples set (FlagHasMetadata)
	// release runs once the run is written, or dropped: the mappings and
	// buffers its pieces lie in.
	release []func()

	// Where Writer.place put it.
	first   int   // its first sample
	dataOff int64 // where its bytes go
	metaOff int64 // where its blocks go, in the metadata section
	metaMem bool  // its blocks are held in memory (Writer.metaRuns)
}

// setDataSize tells a writer whose samples will be placed how many bytes
// they store in all, before the first is: the metadata section then
// starts at a known place, and runs write their blocks there. Close
// fails if the samples stored other than that.
func (w *Writer) setDataSize(n int64) {
	w.metaAt = w.off + n
}

// runSmall is the largest sample copied into a run's own buffer: larger
// ones are written from where they lie (a mapping, an LZ4 block), a
// piece of their own, with one vectored write for the run's pieces. A
// copy of every sample would cost as much as the write, and hold the
// run's bytes twice.
const runSmall = 2 << 10

// runBuilder makes a run of samples for a file of a version.
type runBuilder struct {
	version int
	entLen  int
	r       *run
	buf     []byte // the piece small samples go to
	samples int    // the hint newRunBuilder was given
}

// newRunBuilder starts a run of up to about samples samples of bytes in
// all (hints, for the first allocation).
func newRunBuilder(version int, bytes int64, samples int) *runBuilder {
	b := &runBuilder{version: version, entLen: entryLen(version), r: &run{}, samples: samples}
	// Only samples of up to runSmall bytes are copied.
	b.buf = make([]byte, 0, min(bytes, int64(samples)*runSmall, 4<<20))
	b.r.idx = make([]byte, 0, samples*b.entLen)
	return b
}

// add appends a prepared sample and its metadata blocks. It copies
// stored bytes of up to runSmall, and then points p.Stored at the copy;
// larger ones must stay as they are until the run is written or
// released.
func (b *runBuilder) add(p *Prepared, meta []MetaEntry) error {
	if b.version == 1 && len(meta) > 0 {
		return fmt.Errorf("version 1 has no metadata: %w", ErrUnrepresentable)
	}
	r := b.r
	s := Sample{Offset: r.dataLen + int64(len(b.buf)), StoredSize: uint32(len(p.Stored)), Size: p.Size, Format: p.Format}
	if b.version == 2 {
		s.Width, s.Height, s.CRC16 = p.Width, p.Height, p.CRC16
	}
	if p.Compressed {
		s.Flags |= SampleCompressed
	}
	if len(meta) > 0 {
		s.Flags |= SampleHasMetadata
		r.flags |= FlagHasMetadata
		if r.meta == nil {
			// As many more blocks as this one, about.
			r.meta = make([]byte, 0, max(1, b.samples-r.n)*(MetaBlockLen+len(meta[0].Data)+8))
		}
		for _, m := range meta {
			if int64(len(m.Data)) >= MaxSampleSize {
				return fmt.Errorf("metadata entry of %d bytes: entries must be under 4 GiB: %w", len(m.Data), ErrUnrepresentable)
			}
			r.meta = appendMetaBlock(r.meta, uint64(r.n), m)
		}
	}
	k := len(r.idx)
	r.idx = append(r.idx, make([]byte, b.entLen)...)
	putEntry(r.idx[k:k+b.entLen], b.version, &s)
	if len(p.Stored) <= runSmall {
		at := len(b.buf)
		b.buf = append(b.buf, p.Stored...)
		p.Stored = b.buf[at:len(b.buf):len(b.buf)]
	} else {
		b.cut()
		r.pieces = append(r.pieces, p.Stored)
		r.dataLen += int64(len(p.Stored))
	}
	r.n++
	return nil
}

// cut ends the piece small samples go to.
func (b *runBuilder) cut() {
	if len(b.buf) > 0 {
		b.r.pieces = append(b.r.pieces, b.buf)
		b.r.dataLen += int64(len(b.buf))
		b.buf = b.buf[len(b.buf):]
	}
}

// done gives the run made.
func (b *runBuilder) done() *run {
	b.cut()
	return b.r
}

// appendMetaBlock appends one metadata block of sample i.
func appendMetaBlock(dst []byte, i uint64, m MetaEntry) []byte {
	var bh [MetaBlockLen]byte
	le := binary.LittleEndian
	le.PutUint64(bh[0:], i)
	le.PutUint32(bh[8:], uint32(len(m.Data)))
	le.PutUint16(bh[12:], m.Type)
	dst = append(dst, bh[:]...)
	return append(dst, m.Data...)
}

// placers write runs where Writer.place put them.
type placers struct {
	jobs    chan *run
	workers sync.WaitGroup
	busy    sync.WaitGroup // runs handed over and not yet written
	mu      sync.Mutex
	err     error // the first write that failed
	failed  atomic.Bool
}

// setPlacers has the runs Writer.place is given written by n goroutines.
func (w *Writer) setPlacers(n int) {
	pl := &placers{jobs: make(chan *run, 2*max(n, 1))}
	for range max(n, 1) {
		pl.workers.Add(1)
		go func() {
			defer pl.workers.Done()
			for r := range pl.jobs {
				if !pl.failed.Load() {
					if err := w.writeRun(r); err != nil {
						pl.mu.Lock()
						if pl.err == nil {
							pl.err = err
						}
						pl.mu.Unlock()
						pl.failed.Store(true)
					}
				}
				releaseRun(r)
				pl.busy.Done()
			}
		}()
	}
	w.pl = pl
}

func releaseRun(r *run) {
	for _, f := range r.release {
		f()
	}
	r.release = nil
}

// wait waits for the runs handed over, and gives the first error
// writing them.
func (pl *placers) wait() error {
	pl.busy.Wait()
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.err
}

// stop waits for the runs handed over and ends the goroutines.
func (pl *placers) stop() error {
	err := pl.wait()
	close(pl.jobs)
	pl.workers.Wait()
	return err
}

// place gives run r the next samples' place, and hands it to the
// placers (setPlacers), which write it and then release it. It is
// called in order, and never mixed with the Add methods.
func (w *Writer) place(r *run) error {
	if w.err != nil {
		releaseRun(r)
		return w.err
	}
	if w.pl.failed.Load() {
		releaseRun(r)
		return w.fail(w.pl.wait())
	}
	if w.n+r.n > w.sampleEnd() || w.metaAt >= 0 && w.off+r.dataLen > w.metaAt {
		releaseRun(r)
		return w.fail(fmt.Errorf("samples %d-%d: more samples, or bytes, than announced (%d samples, %d bytes): %w",
			w.n, w.n+r.n-1, w.opts.NumSamples, w.metaAt-w.dataStart(), ErrChanged))
	}
	r.first, r.dataOff, r.metaOff = w.n, w.off, w.metaLen
	w.n += r.n
	w.off += r.dataLen
	w.metaLen += int64(len(r.meta))
	w.flags |= r.flags
	if len(r.meta) > 0 && w.spill == nil && w.metaAt < 0 {
		if w.metaLen <= int64(w.opts.SpoolMemory) {
			r.metaMem = true
			w.metaRuns = append(w.metaRuns, r.meta)
		} else if err := w.spillRuns(); err != nil {
			releaseRun(r)
			return w.fail(err)
		}
	}
	w.pl.busy.Add(1)
	w.pl.jobs <- r
	return nil
}

// spillRuns moves the metadata held in memory to a temporary file beside
// the output, which the blocks of every later run go to.
func (w *Writer) spillRuns() error {
	// The runs holding those blocks are written first: their placers
	// number the blocks in place.
	if err := w.pl.wait(); err != nil {
		return err
	}
	f, err := safefile.Scratch(filepath.Dir(w.out.Target()), "meta")
	if err != nil {
		return err
	}
	w.spill = f
	var off int64
	for _, m := range w.metaRuns {
		if _, err := f.WriteAt(m, off); err != nil {
			return err
		}
		off += int64(len(m))
	}
	w.metaRuns = nil
	return nil
}

// writeRun writes a run where place put it: its entries' offsets and its
// blocks' sample numbers made absolute.
func (w *Writer) writeRun(r *run) error {
	le := binary.LittleEndian
	for k := 0; k < len(r.idx); k += w.entLen {
		le.PutUint64(r.idx[k:], le.Uint64(r.idx[k:])+uint64(r.dataOff))
	}
	for k := 0; k < len(r.meta); {
		le.PutUint64(r.meta[k:], le.Uint64(r.meta[k:])+uint64(r.first))
		k += MetaBlockLen + int(le.Uint32(r.meta[k+8:]))
	}
	at := int64(w.hdrLen) + int64(r.first)*int64(w.entLen)
	f := w.file()
	if _, err := f.WriteAt(r.idx, at); err != nil {
		return fmt.Errorf("index at offset %d: %w", at, err)
	}
	if err := mapped.WritePieces(f, r.pieces, r.dataOff); err != nil {
		return fmt.Errorf("samples %d-%d, from offset %d: %w", r.first, r.first+r.n-1, r.dataOff, err)
	}
	if len(r.meta) > 0 && w.metaAt >= 0 {
		if _, err := w.out.WriteAt(r.meta, w.metaAt+r.metaOff); err != nil {
			return fmt.Errorf("metadata of samples %d-%d: %w", r.first, r.first+r.n-1, err)
		}
	} else if len(r.meta) > 0 && !r.metaMem {
		if _, err := w.spill.WriteAt(r.meta, r.metaOff); err != nil {
			return fmt.Errorf("metadata of samples %d-%d: %w", r.first, r.first+r.n-1, err)
		}
	}
	// What the runs wrote can be on its way to the disk while others are
	// written (the placers write all over the file: the index, the data
	// and the metadata section grow at once): every writebackEvery bytes,
	// the file's dirty pages all at once. A call for each range of each
	// run was a fifth of a conversion of small shards, runs of kilobytes.
	if w.wbPending.Add(int64(len(r.idx))+r.dataLen+int64(len(r.meta))) >= writebackEvery {
		w.wbPending.Store(0)
		startWritebackAll(f)
		if w.out != nil && w.out.File != f {
			startWritebackAll(w.out.File)
		}
	}
	return nil
}

// writebackEvery is how many bytes runs write between two writebacks.
const writebackEvery = 8 << 20

// finishPlaced writes the metadata section after the data, and the
// header, of a file whose samples were placed: the index is in place.
func (w *Writer) finishPlaced() error {
	if w.metaAt >= 0 && w.off != w.metaAt {
		return fmt.Errorf("the samples stored %d bytes, %d were announced: %w", w.off-w.dataStart(), w.metaAt-w.dataStart(), ErrChanged)
	}
	h := Header{
		Version:    w.opts.Version,
		NumSamples: uint64(w.n),
		HeaderSize: uint32(int64(w.hdrLen) + int64(w.n)*int64(w.entLen)),
		Flags:      w.flags,
	}
	if w.metaLen > 0 {
		h.MetadataOffset, h.MetadataSize = uint64(w.off), uint64(w.metaLen)
		at := w.off
		if w.metaAt >= 0 {
			// Written in place.
			return w.writeHeader(&h)
		}
		for _, m := range w.metaRuns {
			if _, err := w.out.WriteAt(m, at); err != nil {
				return err
			}
			at += int64(len(m))
		}
		if w.spill != nil {
			if err := copyAt(w.out.File, w.off, w.spill, w.metaLen, w.placerCount); err != nil {
				return err
			}
		}
	}
	return w.writeHeader(&h)
}

func (w *Writer) writeHeader(h *Header) error {
	_, err := w.out.WriteAt(marshalHeader(h), 0)
	return err
}

// dataStart is where the samples' bytes start.
func (w *Writer) dataStart() int64 {
	return int64(w.hdrLen) + int64(w.opts.NumSamples)*int64(w.entLen)
}

// copyAt copies n bytes from the start of src to dst at off, with the
// work split between several goroutines: it runs once a file, after
// everything else, and its bytes grow with the samples.
func copyAt(dst *os.File, off int64, src *os.File, n int64, workers int) error {
	const chunk = 4 << 20
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make([]error, max(1, min(workers, int((n+chunk-1)/chunk))))
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, min(chunk, n))
			for {
				lo := next.Add(chunk) - chunk
				if lo >= n {
					return
				}
				b := buf[:min(chunk, n-lo)]
				if _, err := src.ReadAt(b, lo); err != nil {
					if errors.Is(err, io.EOF) {
						err = io.ErrUnexpectedEOF
					}
					errs[i] = fmt.Errorf("metadata spill at offset %d: %w", lo, err)
					return
				}
				if _, err := syswrite.WriteAt(dst, b, off+lo); err != nil {
					errs[i] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}
