package compressed

import (
	"bufio"
	"compress/bzip2"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	xz "github.com/therootcompany/xz"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// ErrCorrupt: a compressed stream is corrupt, or cut short.
var ErrCorrupt = errors.New("corrupt or truncated compressed stream")

// MaxWindow bounds the window (dictionary) a zstd or xz stream may ask
// for: a stream's header is not a reason to allocate gigabytes. The
// tools' own settings stay well within it (zstd -19 uses 8 MiB, --long
// 128 MiB; xz -9 64 MiB); gzip's window is 32 KiB, bzip2's block 900 kB.
const MaxWindow = 256 << 20

// NewReader decompresses r, a stream of codec c (concatenated streams of
// the codec are read one after the other, as the codec's tools do). Each
// decoder keeps a bounded window, never the whole stream.
func NewReader(r io.Reader, c Codec) (io.ReadCloser, error) {
	switch c {
	case None:
		return io.NopCloser(r), nil
	case Gzip:
		return newGzipMembers(r)
	case Zstd:
		// One goroutine: shards decompress in parallel already, one each.
		d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
			zstd.WithDecoderMaxWindow(MaxWindow), zstd.WithDecoderMaxMemory(MaxWindow))
		if err != nil {
			return nil, err
		}
		return zstdReader{d}, nil
	case Bzip2:
		return io.NopCloser(bzip2.NewReader(r)), nil
	case Xz:
		d, err := xz.NewReader(r, MaxWindow)
		if err != nil {
			return nil, err
		}
		return io.NopCloser(d), nil
	}
	return nil, fmt.Errorf("unknown codec %q", c)
}

// countingReader counts the bytes a decoder took from the compressed
// file: where a stream goes wrong, errors say how far into the file.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gzipMembers reads a gzip file member after member, as gzip does, and,
// as gzip does, takes zero bytes after the last member as padding (tape
// blocking leaves them); any other byte there is a corrupt stream.
type gzipMembers struct {
	br *bufio.Reader
	z  *gzip.Reader
}

func newGzipMembers(r io.Reader) (*gzipMembers, error) {
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReader(r)
	}
	z, err := gzip.NewReader(br)
	if err != nil {
		return nil, err
	}
	z.Multistream(false)
	return &gzipMembers{br: br, z: z}, nil
}

// next moves to the member after the one that ended: io.EOF when nothing,
// or only zero padding, is left.
func (g *gzipMembers) next() error {
	padding := false
	for {
		b, err := g.br.Peek(1)
		if err == io.EOF {
			return io.EOF
		}
		if err != nil {
			return err
		}
		if b[0] != 0 {
			break
		}
		padding = true
		buf, _ := g.br.Peek(g.br.Buffered())
		k := 0
		for k < len(buf) && buf[k] == 0 {
			k++
		}
		g.br.Discard(k)
	}
	if padding {
		return errors.New("bytes after the zero padding that ends the gzip stream")
	}
	if err := g.z.Reset(g.br); err != nil {
		return err
	}
	g.z.Multistream(false)
	return nil
}

func (g *gzipMembers) Read(p []byte) (int, error) {
	for {
		n, err := g.z.Read(p)
		if err != io.EOF {
			return n, err
		}
		if err := g.next(); err != nil {
			return n, err
		}
		if n > 0 {
			return n, nil
		}
	}
}

// WriteTo writes each member straight to w (the decoder's own WriteTo).
func (g *gzipMembers) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		n, err := g.z.WriteTo(w)
		total += n
		if err != nil {
			return total, err
		}
		if err := g.next(); err != nil {
			if err == io.EOF {
				return total, nil
			}
			return total, err
		}
	}
}

func (g *gzipMembers) Close() error { return g.z.Close() }

// zstdReader keeps the decoder's WriteTo, which writes each block
// straight to the writer (IOReadCloser would copy it once more).
type zstdReader struct{ *zstd.Decoder }

func (z zstdReader) Close() error {
	z.Decoder.Close()
	return nil
}

// Decompress writes the decompressed bytes of r, a stream of codec c named
// name, to w, and returns how many. A stream that is corrupt or cut short
// is an error wrapping ErrCorrupt that names name and the compressed
// offset the decoder had read up to. The decoder writes to w directly
// where it can (WriteTo); a canceled ctx stops it at its next write.
func Decompress(ctx context.Context, name string, r io.Reader, c Codec, w io.Writer) (int64, error) {
	// Decoders read faster from a large buffer; the offset they reached is
	// what was read less what the buffer still holds.
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 1<<20)
	offset := func() int64 { return cr.n - int64(br.Buffered()) }
	d, err := NewReader(br, c)
	if err != nil {
		return 0, fmt.Errorf("%s: compressed offset %d: %s header: %v: %w", name, offset(), c, err, ErrCorrupt)
	}
	defer d.Close()
	n, err := io.CopyBuffer(&guardedWriter{ctx: ctx, w: w}, d, make([]byte, 256<<10))
	if err == nil {
		return n, nil
	}
	var we writeError
	switch {
	case ctx.Err() != nil:
		return n, ctx.Err()
	case errors.As(err, &we):
		return n, fmt.Errorf("%s: writing its decompressed bytes: %w", name, we.err)
	case errors.Is(err, io.EOF):
		err = io.ErrUnexpectedEOF
	}
	return n, fmt.Errorf("%s: compressed offset %d (decompressed %d): %s: %v: %w", name, offset(), n, c, err, ErrCorrupt)
}

// guardedWriter tells the writer's errors (a full disk) from the stream's,
// and stops a decompression whose context is canceled.
type guardedWriter struct {
	ctx context.Context
	w   io.Writer
}

func (g *guardedWriter) Write(p []byte) (int, error) {
	if err := g.ctx.Err(); err != nil {
		return 0, writeError{err}
	}
	n, err := g.w.Write(p)
	if err != nil {
		err = writeError{err}
	}
	return n, err
}

// writeError marks an error of the writer (a full disk), or a canceled
// context, not of the stream.
type writeError struct{ err error }

func (e writeError) Error() string { return e.err.Error() }

// DecompressFile is Decompress of a file, its codec told by its bytes.
func DecompressFile(ctx context.Context, path string, w io.Writer) (Codec, int64, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return None, 0, err
	}
	defer f.Close()
	head := make([]byte, HeadSize)
	k, _ := io.ReadFull(f, head)
	c := Sniff(head[:k])
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return c, 0, err
	}
	n, err := Decompress(ctx, path, f, c, w)
	return c, n, err
}

// DecompressStream is Decompress of a stream, its codec told by its first
// bytes (a stream that is no compressed one is copied as it is). An empty
// stream gives None and no byte.
func DecompressStream(ctx context.Context, name string, r io.Reader, w io.Writer) (Codec, int64, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	head, _ := br.Peek(HeadSize) // a short or failed read is Decompress's to report
	c := Sniff(head)
	n, err := Decompress(ctx, name, br, c, w)
	return c, n, err
}
