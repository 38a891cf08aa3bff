package tbl

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/safefile"
)

// WriterOptions choose what a Writer writes.
type WriterOptions struct {
	// Version is 1 or 2.
	Version int
	// LZ4 (v2 only) stores each sample as a raw LZ4 block when that is
	// smaller, as TurboLoader's converter does by default, and sets
	// FlagCompressed in the header whether or not any sample shrank.
	LZ4 bool
	// NumSamples is how many samples will be added, exactly: the index
	// precedes the data, so its size fixes where the data starts, and the
	// data streams to its final place. Zero makes a file with no samples.
	NumSamples int
	// SpoolMemory is how many bytes of metadata are held in memory before
	// they spill to a temporary file beside the output (default 1 MiB):
	// the metadata section follows the data, so it is known only at the end.
	SpoolMemory int
	// KeepFormat writes format codes version 1 does not define (MP4 and
	// up) as they are, as TurboLoader's writer does, rather than refusing
	// them: a converter giving a file's own codes back sets it.
	KeepFormat bool
	// Replace lets Close replace a file of the output's name; without it,
	// one that appeared meanwhile (another run into the same new output)
	// fails the close with safefile.ErrExists, and stays as it was.
	Replace bool
}

// lz4MaxInput is the largest block LZ4 compresses (LZ4_MAX_INPUT_SIZE).
// Larger samples are stored as they are.
const lz4MaxInput = 0x7E000000

var errWriterDone = errors.New("tbl: writer already closed or aborted")

// Writer writes a TBL file in TurboLoader's layout, byte for byte: header,
// index, data back to back in the order added, then (v2) the metadata
// section with blocks in the order added. Sample bytes stream to their
// final place; memory holds the index (16 or 24 bytes a sample), the
// metadata up to WriterOptions.SpoolMemory, and, with LZ4, the one sample
// being compressed. The header and index are written last, over the space
// left for them.
//
// The output goes to a temporary file in the target directory, renamed into
// place by Close only when complete: after an error or Abort, nothing
// appears under the target's name and an earlier file there is untouched.
type Writer struct {
	out     *safefile.File
	bw      *bufio.Writer
	opts    WriterOptions
	hdrLen  int
	entLen  int
	index   []byte
	n       int   // samples added
	off     int64 // where the next sample's bytes go
	flags   uint32
	metaLen int64
	meta    []byte   // metadata section, while it fits SpoolMemory
	spill   *os.File // the rest of it, unnamed
	spillW  *bufio.Writer
	buf     []byte // the sample being compressed, or a copy buffer
	err     error

	// Set where runs of samples are placed (place.go) rather than added.
	pl          *placers
	placerCount int
	metaRuns    [][]byte     // the runs' metadata blocks while they fit SpoolMemory
	metaAt      int64        // where the metadata section starts, where known before (else -1)
	wbPending   atomic.Int64 // bytes runs wrote since the last writeback (writeRun)

	// share is set for a writer of one task's share of a file several
	// tasks write at once (WriteRange): out is nil.
	share *share
}

// Create starts a TBL file at path.
func Create(path string, opts WriterOptions) (*Writer, error) {
	limit := uint64(MaxSamplesV2)
	if opts.Version == 1 {
		limit = MaxSamplesV1
	}
	switch {
	case opts.Version != 1 && opts.Version != 2:
		return nil, fmt.Errorf("creating %s: version %d (1 or 2)", path, opts.Version)
	case opts.Version == 1 && opts.LZ4:
		return nil, fmt.Errorf("creating %s: version 1 has no compression: %w", path, ErrUnrepresentable)
	case opts.NumSamples < 0:
		return nil, fmt.Errorf("creating %s: a sample count of %d", path, opts.NumSamples)
	case uint64(opts.NumSamples) > limit:
		return nil, fmt.Errorf("creating %s: %d samples: a v%d index holds at most %d (its size is a 32-bit field): %w",
			path, opts.NumSamples, opts.Version, limit, ErrUnrepresentable)
	}
	if opts.SpoolMemory <= 0 {
		opts.SpoolMemory = 1 << 20
	}
	out, err := safefile.Create(path)
	if err != nil {
		return nil, err
	}
	w := &Writer{out: out, opts: opts, hdrLen: headerLen(opts.Version), entLen: entryLen(opts.Version), metaAt: -1}
	w.off = int64(w.hdrLen) + int64(opts.NumSamples)*int64(w.entLen)
	if opts.Version == 2 {
		w.flags = FlagHasChecksums
		if opts.LZ4 {
			w.flags |= FlagCompressed
		}
	}
	if _, err := out.Seek(w.off, io.SeekStart); err != nil {
		out.Abort()
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	// Samples are written front to back: they can be on their way to the
	// disk while the rest is written.
	w.bw = bufio.NewWriterSize(out.Appender(w.off), 1<<20)
	return w, nil
}

func (w *Writer) fail(err error) error {
	w.err = fmt.Errorf("writing %s: %w", w.name(), err)
	return w.err
}

// name is the file the Writer writes.
func (w *Writer) name() string {
	if w.share != nil {
		return w.share.f.Name()
	}
	return w.out.Target()
}

// file is the open file the samples go to.
func (w *Writer) file() *os.File {
	if w.share != nil {
		return w.share.f
	}
	return w.out.File
}

// sampleEnd is the number after the last sample the Writer writes.
func (w *Writer) sampleEnd() int {
	if w.share != nil {
		return w.share.end
	}
	return w.opts.NumSamples
}

// Add appends a sample of size bytes read from data, without dimensions.
func (w *Writer) Add(format Format, data io.Reader, size int64, meta []MetaEntry) error {
	return w.AddImage(format, 0, 0, data, size, meta)
}

// AddImage appends a sample of size bytes read from data (exactly size bytes
// are read), with the image width and height that v2 caches in its index
// (0 when unknown; version 1 has no place for them and drops them). meta are
// its metadata entries (v2 only). In v2, the entry gets the CRC-16 of the
// bytes and, with LZ4, the sample is stored as an LZ4 block when that is
// smaller than the bytes. Any error is final: Close then reports it and
// leaves no file.
func (w *Writer) AddImage(format Format, width, height uint16, data io.Reader, size int64, meta []MetaEntry) error {
	if err := w.check(format, size, meta); err != nil {
		return err
	}
	i := w.n
	if w.opts.LZ4 && size > 0 && size <= lz4MaxInput {
		// LZ4 needs the whole sample: read it, then as a prepared one.
		w.buf = grow(w.buf, int(size))
		if n, err := io.ReadFull(data, w.buf); err != nil {
			return w.fail(fmt.Errorf("sample %d: data ended after %d of %d bytes: %w", i, n, size, err))
		}
		p, err := PrepareSample(w.opts.Version, true, format, width, height, w.buf)
		if err != nil {
			return w.fail(fmt.Errorf("sample %d: %w", i, err))
		}
		defer p.Release()
		return w.add(p, meta)
	}
	s := Sample{Index: i, Offset: w.off, StoredSize: uint32(size), Size: uint32(size), Format: format}
	if w.opts.Version == 2 {
		s.Width, s.Height = width, height
	}
	if err := w.copy(&s, data); err != nil {
		return w.fail(fmt.Errorf("sample %d: %w", i, err))
	}
	return w.record(s, meta)
}

// check refuses a sample the file cannot hold, for AddImage and
// AddPrepared alike.
func (w *Writer) check(format Format, size int64, meta []MetaEntry) error {
	if w.err != nil {
		return w.err
	}
	i := w.n
	switch {
	case i >= w.opts.NumSamples:
		return w.fail(fmt.Errorf("sample %d: more samples than announced (%d)", i, w.opts.NumSamples))
	case size < 0:
		return w.fail(fmt.Errorf("sample %d: size %d", i, size))
	case size >= MaxSampleSize:
		return w.fail(fmt.Errorf("sample %d: %d bytes: samples must be under 4 GiB: %w", i, size, ErrUnrepresentable))
	case w.opts.Version == 1 && format > TIFF && !w.opts.KeepFormat:
		return w.fail(fmt.Errorf("sample %d: format %v does not exist in version 1: %w", i, format, ErrUnrepresentable))
	case w.opts.Version == 1 && len(meta) > 0:
		return w.fail(fmt.Errorf("sample %d: version 1 has no metadata: %w", i, ErrUnrepresentable))
	}
	for _, m := range meta {
		if int64(len(m.Data)) >= MaxSampleSize {
			return w.fail(fmt.Errorf("sample %d: metadata entry of %d bytes: entries must be under 4 GiB: %w", i, len(m.Data), ErrUnrepresentable))
		}
	}
	return nil
}

// record adds the metadata and the index entry of sample s, whose bytes
// are written.
func (w *Writer) record(s Sample, meta []MetaEntry) error {
	if len(meta) > 0 {
		s.Flags |= SampleHasMetadata
		w.flags |= FlagHasMetadata
		for _, m := range meta {
			if err := w.addMeta(s.Index, m); err != nil {
				return w.fail(fmt.Errorf("sample %d: metadata: %w", s.Index, err))
			}
		}
	}
	if w.index == nil {
		// Sized once: the index never moves while it grows, so its
		// memory is the index, not twice it. Made by the first Add: a
		// writer whose runs are placed (place.go) writes it in place.
		w.index = make([]byte, 0, w.opts.NumSamples*w.entLen)
	}
	k := len(w.index)
	w.index = append(w.index, make([]byte, w.entLen)...)
	putEntry(w.index[k:], w.opts.Version, &s)
	w.off += int64(s.StoredSize)
	w.n++
	return nil
}

// copy streams a sample to the output through the CRC.
func (w *Writer) copy(s *Sample, data io.Reader) error {
	if len(w.buf) < 256<<10 {
		w.buf = make([]byte, 256<<10)
	}
	crc := uint16(crc16Init)
	for left := int64(s.Size); left > 0; {
		chunk := w.buf[:min(int64(len(w.buf)), left)]
		n, err := io.ReadFull(data, chunk)
		if err != nil {
			return fmt.Errorf("data ended after %d of %d bytes: %w", int64(s.Size)-left+int64(n), s.Size, err)
		}
		if w.opts.Version == 2 {
			crc = crc16Update(crc, chunk)
		}
		if _, err := w.bw.Write(chunk); err != nil {
			return err
		}
		left -= int64(n)
	}
	if w.opts.Version == 2 {
		s.CRC16 = crc
	}
	return nil
}

// addMeta appends one metadata block to the spool.
func (w *Writer) addMeta(sample int, m MetaEntry) error {
	var bh [MetaBlockLen]byte
	le := binary.LittleEndian
	le.PutUint64(bh[0:], uint64(sample))
	le.PutUint32(bh[8:], uint32(len(m.Data)))
	le.PutUint16(bh[12:], m.Type)
	w.metaLen += MetaBlockLen + int64(len(m.Data))
	if w.spill == nil && len(w.meta)+MetaBlockLen+len(m.Data) > w.opts.SpoolMemory {
		f, err := safefile.Scratch(filepath.Dir(w.out.Target()), "meta")
		if err != nil {
			return err
		}
		w.spill, w.spillW = f, bufio.NewWriterSize(f, 64<<10)
		if _, err := w.spillW.Write(w.meta); err != nil {
			return err
		}
		w.meta = nil
	}
	if w.spill != nil {
		w.spillW.Write(bh[:])
		_, err := w.spillW.Write(m.Data) // a bufio.Writer keeps its first error
		return err
	}
	w.meta = append(w.meta, bh[:]...)
	w.meta = append(w.meta, m.Data...)
	return nil
}

// Close writes the metadata section, the header and the index, and renames
// the file into place. It fails, leaving no file, unless exactly NumSamples
// samples were added.
func (w *Writer) Close() error {
	if w.share != nil {
		return w.closeWindow()
	}
	defer w.release()
	placed := w.pl != nil
	if placed {
		// The runs handed over are written before anything else is.
		if err := w.pl.stop(); err != nil && w.err == nil {
			w.fail(err)
		}
		w.pl = nil
	}
	if w.err == nil && w.n != w.opts.NumSamples {
		w.fail(fmt.Errorf("closed after %d samples, %d were announced", w.n, w.opts.NumSamples))
	}
	if w.err == nil {
		finish := w.finish
		if placed {
			finish = w.finishPlaced
		}
		if err := finish(); err != nil {
			w.fail(err)
		}
	}
	if w.err != nil {
		w.out.Abort()
		err := w.err
		w.err = errWriterDone
		return err
	}
	w.err = errWriterDone
	if w.opts.Replace {
		return w.out.CommitReplace()
	}
	return w.out.Commit()
}

func (w *Writer) finish() error {
	h := Header{
		Version:    w.opts.Version,
		NumSamples: uint64(w.n),
		HeaderSize: uint32(w.hdrLen + len(w.index)),
		Flags:      w.flags,
	}
	if w.metaLen > 0 {
		h.MetadataOffset, h.MetadataSize = uint64(w.off), uint64(w.metaLen)
		if _, err := w.bw.Write(w.meta); err != nil {
			return err
		}
		if w.spill != nil {
			if err := w.spillW.Flush(); err != nil {
				return err
			}
			if err := w.bw.Flush(); err != nil {
				return err
			}
			if _, err := w.spill.Seek(0, io.SeekStart); err != nil {
				return err
			}
			// Both are files: io.Copy moves the bytes in the kernel.
			if _, err := io.Copy(w.out.File, w.spill); err != nil {
				return err
			}
		}
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	if _, err := w.out.WriteAt(marshalHeader(&h), 0); err != nil {
		return err
	}
	_, err := w.out.WriteAt(w.index, int64(w.hdrLen))
	return err
}

// Abort discards the output. After Close it does nothing, so it can be
// deferred.
func (w *Writer) Abort() {
	w.release() // first: the placers stop writing
	w.err = errWriterDone
	if w.out != nil {
		w.out.Abort()
	}
}

func (w *Writer) release() {
	if w.pl != nil {
		// Nothing may write into the file once it is closed; runs not yet
		// written are only released (the file is being discarded: Close
		// stops the placers itself first).
		w.pl.failed.Store(true)
		w.pl.stop()
		w.pl = nil
	}
	if w.spill != nil {
		w.spill.Close()
		w.spill, w.spillW = nil, nil
	}
	w.index, w.meta, w.buf, w.metaRuns = nil, nil, nil, nil
}
