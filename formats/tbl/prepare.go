package tbl

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/pierrec/lz4/v4"
)

// Prepared is a sample whose checksum and compression were worked out
// ahead of writing, by PrepareSample, so that a converter can do that work
// for many samples in parallel and keep only the appending in order.
type Prepared struct {
	Format        Format
	Width, Height uint16
	Size          uint32 // uncompressed bytes
	CRC16         uint16 // of the uncompressed bytes (version 2)
	Stored        []byte // the bytes to store: an LZ4 block, or the sample
	Compressed    bool

	block *pooled // Stored's buffer, from blocks
}

var compressors = sync.Pool{New: func() any { return new(lz4.CompressorCCompat) }}

// PrepareSample does for data what AddImage would: in version 2 the CRC-16
// and, with useLZ4, the LZ4 block (the reference compressor's exact output)
// when it is smaller. It is safe for concurrent use. Stored aliases data
// unless the sample was compressed.
func PrepareSample(version int, useLZ4 bool, format Format, width, height uint16, data []byte) (Prepared, error) {
	if int64(len(data)) >= MaxSampleSize {
		return Prepared{}, fmt.Errorf("%d bytes: samples must be under 4 GiB: %w", len(data), ErrUnrepresentable)
	}
	p := Prepared{Format: format, Size: uint32(len(data)), Stored: data}
	if version != 2 {
		return p, nil
	}
	p.Width, p.Height = width, height
	p.CRC16 = CRC16(data)
	if useLZ4 && len(data) > 0 && len(data) <= lz4MaxInput {
		c := compressors.Get().(*lz4.CompressorCCompat)
		defer compressors.Put(c)
		buf := blocks.Get().(*[]byte)
		if bound := lz4.CompressBlockBound(len(data)); cap(*buf) < bound {
			*buf = make([]byte, bound)
		}
		out := (*buf)[:cap(*buf)]
		n, err := c.CompressBlock(data, out)
		if err != nil {
			blocks.Put(buf)
			return Prepared{}, fmt.Errorf("LZ4: %w", err)
		}
		if n > 0 && n < len(data) {
			p.Stored, p.Compressed, p.block = out[:n], true, &pooled{buf: buf}
		} else {
			blocks.Put(buf)
		}
	}
	return p, nil
}

// blocks recycles LZ4 output buffers: one per sample would make the
// garbage collector's work, and the heap, grow with the samples.
var blocks = sync.Pool{New: func() any { return new([]byte) }}

// pooled is a buffer from blocks, given back at most once whichever copy
// of a Prepared releases it.
type pooled struct {
	buf      *[]byte
	released atomic.Bool
}

// Release gives p's LZ4 block back for reuse once p has been added: the
// Stored bytes of p and of its copies must not be used afterwards. Not
// calling it is safe.
func (p *Prepared) Release() {
	p.block.release()
	p.block, p.Stored = nil, nil
}

// release gives the buffer back, once.
func (b *pooled) release() {
	if b != nil && b.released.CompareAndSwap(false, true) {
		blocks.Put(b.buf)
	}
}

// AddPrepared appends a sample prepared by PrepareSample with this
// writer's version and LZ4 setting. Its result is byte for byte what
// AddImage gives for the same sample.
func (w *Writer) AddPrepared(p Prepared, meta []MetaEntry) error {
	if err := w.check(p.Format, int64(p.Size), meta); err != nil {
		return err
	}
	if p.Compressed && !w.opts.LZ4 {
		return w.fail(fmt.Errorf("sample %d: compressed, but the writer has no LZ4", w.n))
	}
	return w.add(p, meta)
}

// add writes a prepared sample that check accepted.
func (w *Writer) add(p Prepared, meta []MetaEntry) error {
	i := w.n
	s := Sample{Index: i, Offset: w.off, StoredSize: uint32(len(p.Stored)), Size: p.Size, Format: p.Format}
	if w.opts.Version == 2 {
		s.Width, s.Height, s.CRC16 = p.Width, p.Height, p.CRC16
	}
	if p.Compressed {
		s.Flags |= SampleCompressed
		s.Compressed = true
	}
	if _, err := w.bw.Write(p.Stored); err != nil {
		return w.fail(fmt.Errorf("sample %d: %w", i, err))
	}
	return w.record(s, meta)
}
