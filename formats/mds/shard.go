package mds

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// column is a shard's column, as its index entry gives it.
type column struct {
	name    string
	encName string
	enc     encoding
}

// batch is a run of consecutive samples of a shard, read: their bytes,
// and where each column's value of each sample lies in them.
type batch struct {
	first int // the first sample's number in the shard
	data  []byte
	// buf, when the scan was asked for pooled batches, holds data: to be
	// released once nothing refers to data (nil: data is the batch's own).
	buf  *batchBuf
	base int64 // the offset of data in the shard's raw bytes
	// vals holds, for sample i of the batch and column c, the value's
	// start and end in data at [i*len(columns)+c].
	vals [][2]uint32
}

func (b *batch) samples(ncols int) int {
	if ncols == 0 {
		return 0
	}
	return len(b.vals) / ncols
}

// Batches end past batchBytes of samples, or batchSamples of them.
const (
	batchBytes   = 1 << 20
	batchSamples = 4096
)

// batchBuf is a batch's bytes from a pool, given back once the batch is
// written: reading a dataset then takes the same few buffers again and
// again, not fresh memory (zeroed first) for each batch.
type batchBuf struct{ b []byte }

var batchBufs = sync.Pool{New: func() any { return &batchBuf{b: make([]byte, batchBytes)} }}

// Release gives the buffer back to the pool.
func (p *batchBuf) Release() { batchBufs.Put(p) }

// stream reads a shard's raw bytes in order, counting them.
type stream struct {
	r    *bufio.Reader
	pos  int64
	what string // names the shard in errors
}

func (s *stream) corrupt(format string, args ...any) error {
	return fmt.Errorf("%s: offset %d: %s: %w", s.what, s.pos, fmt.Sprintf(format, args...), ErrCorrupt)
}

// readPooled reads exactly n bytes (at most batchBytes) into a buffer
// from the pool.
func (s *stream) readPooled(n int64) (*batchBuf, error) {
	p := batchBufs.Get().(*batchBuf)
	if _, err := io.ReadFull(s.r, p.b[:n]); err != nil {
		p.Release()
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return nil, s.corrupt("%d bytes expected, the shard ends first", n)
		}
		return nil, fmt.Errorf("%s: offset %d: %w", s.what, s.pos, err)
	}
	s.pos += n
	return p, nil
}

// read reads exactly n bytes. Past 16 MiB (a sample that large), memory
// grows with the bytes that come, not with the n a header claims.
func (s *stream) read(n int64) ([]byte, error) {
	var b []byte
	var err error
	if n <= 16<<20 {
		b = make([]byte, n)
		_, err = io.ReadFull(s.r, b)
	} else {
		var buf bytes.Buffer
		var m int64
		m, err = io.CopyN(&buf, s.r, n)
		b = buf.Bytes()[:m]
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || err == io.EOF {
			return nil, s.corrupt("%d bytes expected, the shard ends first", n)
		}
		return nil, fmt.Errorf("%s: offset %d: %w", s.what, s.pos, err)
	}
	s.pos += n
	return b, nil
}

// scanShard reads shard i whole, in order: its header, then its samples
// a batch at a time, handed to fn; then it checks the hashes the index
// records of its files. A batch's bytes belong to fn; with pooled, those
// of a batch of at most batchBytes are in a buffer of the pool (batch.buf)
// that fn releases.
func (d *Dataset) scanShard(ctx context.Context, i int, pooled bool, fn func(*batch) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s := &d.index.Shards[i]
	rawPath := d.file(s.RawData.Basename)
	open := func(p string, size int64) (io.ReadCloser, error) {
		f, err := pathguard.Open(p)
		if err != nil {
			return nil, err
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, err
		}
		if st.Size() != size {
			f.Close()
			return nil, fmt.Errorf("%s: %d bytes, the index records %d: %w", p, st.Size(), size, ErrCorrupt)
		}
		return f, nil
	}
	var (
		raw     io.Reader
		zipHash *hashSet
		zipFile io.Reader
		what    = rawPath
	)
	if s.ZipData != nil {
		zp := d.file(s.ZipData.Basename)
		what = zp + " (decompressed)"
		f, err := open(zp, s.ZipData.Bytes)
		if err != nil {
			return err
		}
		defer f.Close()
		zipHash = newHashSet(s.ZipData.Hashes)
		zipFile = io.TeeReader(f, zipHash)
		c, _ := lookupCompression(*s.Compression)
		dec, err := c.reader(zipFile)
		if err != nil {
			return fmt.Errorf("%s: %v: %w", zp, err, ErrCorrupt)
		}
		defer dec.Close()
		raw = dec
	} else {
		f, err := open(rawPath, s.RawData.Bytes)
		if err != nil {
			return err
		}
		defer f.Close()
		raw = f
	}
	rawHash := newHashSet(s.RawData.Hashes)
	st := &stream{r: bufio.NewReaderSize(io.TeeReader(raw, rawHash), 256<<10), what: what}
	cols := d.cols[i]
	offsets, err := d.readHeader(st, s, cols)
	if err != nil {
		return err
	}
	n := len(offsets) - 1
	for j := 0; j < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		k := j + 1
		for k < n && k-j < batchSamples && offsets[k+1]-offsets[j] <= batchBytes {
			k++
		}
		b := &batch{first: j, base: st.pos}
		if n := int64(offsets[k] - offsets[j]); pooled && n <= batchBytes {
			if b.buf, err = st.readPooled(n); err != nil {
				return err
			}
			b.data = b.buf.b[:n]
		} else if b.data, err = st.read(n); err != nil {
			return err
		}
		b.vals = make([][2]uint32, (k-j)*len(cols))
		for x := j; x < k; x++ {
			lo, hi := offsets[x]-offsets[j], offsets[x+1]-offsets[j]
			if err := decodeSample(b.data[lo:hi], cols, b.vals[(x-j)*len(cols):(x-j+1)*len(cols)], lo); err != nil {
				return fmt.Errorf("%s: offset %d: sample %d: %v: %w", what, int64(offsets[x]), x, err, ErrCorrupt)
			}
		}
		if err := fn(b); err != nil {
			return err
		}
		j = k
	}
	// The shard ends where its last sample does, and its files hash as
	// the index records.
	if _, err := st.r.ReadByte(); err != io.EOF {
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		return st.corrupt("bytes past the last sample")
	}
	if zipFile != nil {
		if _, err := io.Copy(io.Discard, zipFile); err != nil {
			return err
		}
		if err := zipHash.check(d.file(s.ZipData.Basename), s.ZipData.Hashes); err != nil {
			return err
		}
	}
	return rawHash.check(rawPath, s.RawData.Hashes)
}

// readHeader reads a shard's header: its number of samples, their
// offsets and the writer's configuration, each checked against the
// index; it returns the offsets.
func (d *Dataset) readHeader(st *stream, s *ShardInfo, cols []column) ([]uint32, error) {
	size := s.RawData.Bytes
	head, err := st.read(4)
	if err != nil {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(head))
	if n != s.Samples {
		return nil, st.corrupt("%d samples, the index records %d", n, s.Samples)
	}
	table := 4 * (n + 1)
	if 4+table > size {
		return nil, st.corrupt("%d samples' offsets do not fit in the shard's %d bytes", n, size)
	}
	b, err := st.read(table)
	if err != nil {
		return nil, err
	}
	offsets := make([]uint32, n+1)
	for i := range offsets {
		offsets[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	if int64(offsets[0]) < 4+table || int64(offsets[n]) != size {
		return nil, st.corrupt("samples from offset %d to %d, in a shard of %d bytes whose header ends at %d", offsets[0], offsets[n], size, 4+table)
	}
	for i := 1; i <= int(n); i++ {
		if offsets[i] < offsets[i-1] {
			return nil, st.corrupt("sample %d ends at offset %d, before it starts (%d)", i-1, offsets[i], offsets[i-1])
		}
	}
	cfg, err := st.read(int64(offsets[0]) - 4 - table)
	if err != nil {
		return nil, err
	}
	var c ShardInfo
	if err := json.Unmarshal(cfg, &c); err != nil {
		return nil, st.corrupt("the writer's configuration: %v", err)
	}
	sizesEqual := slices.EqualFunc(c.ColumnSizes, s.ColumnSizes, func(a, b *int64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) })
	if !slices.Equal(c.ColumnNames, s.ColumnNames) || !slices.Equal(c.ColumnEncodings, s.ColumnEncodings) || !sizesEqual || c.Format != s.Format {
		return nil, st.corrupt("the shard's columns (%q, %q) are not the index's (%q, %q)", c.ColumnNames, c.ColumnEncodings, s.ColumnNames, s.ColumnEncodings)
	}
	return offsets, nil
}

// decodeSample finds each column's value in a sample's bytes: the sizes
// of the columns of variable size, then the values. Each vals entry gets
// its value's start and end, base added (the sample's place in its
// batch). The values fill the sample exactly.
func decodeSample(s []byte, cols []column, vals [][2]uint32, base uint32) error {
	at := 0
	for c := range cols {
		if sz := cols[c].enc.size; sz > 0 {
			vals[c][1] = uint32(sz)
			continue
		}
		if at+4 > len(s) {
			return fmt.Errorf("%d bytes, too short for its values' sizes", len(s))
		}
		vals[c][1] = binary.LittleEndian.Uint32(s[at:])
		at += 4
	}
	for c := range cols {
		n := vals[c][1]
		if uint64(n) > uint64(len(s)-at) {
			return fmt.Errorf("column %q: %d bytes, past the sample's end", cols[c].name, n)
		}
		vals[c] = [2]uint32{base + uint32(at), base + uint32(at) + n}
		at += int(n)
	}
	if at != len(s) {
		return fmt.Errorf("its values end %d bytes before it does", len(s)-at)
	}
	return nil
}
