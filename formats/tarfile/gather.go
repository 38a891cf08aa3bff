package tarfile

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/syswrite"
)

// gather is a shard's output: small pieces (headers, padding, short
// payloads) are copied into a buffer, large payloads are only referenced,
// and the pieces go to the file together, with one writev where the system
// has it. Converting many small files, this saves copying every payload
// into a buffer before the system copies it again.
type gather struct {
	f       *safefile.File
	n       int64    // bytes accepted: the position in the shard
	written int64    // bytes in the file
	buf     []byte   // copied pieces, len = bytes used
	mark    int      // buf[mark:] is not yet in iov
	iov     [][]byte // pieces in order, referencing buf or the callers' memory
	// err is the first write error: once bytes are lost, every later call
	// fails, so that the shard is never committed.
	err error
}

const (
	gatherBuf = 256 << 10
	// maxIov bounds the pieces of one writev (the system's IOV_MAX is 1024
	// on Linux).
	maxIov = 1000
	// refMin is the least payload referenced rather than copied: below it,
	// the copy costs less than the system's handling of one more piece.
	refMin = 2 << 10
)

func newGather(f *safefile.File) *gather {
	return &gather{f: f, buf: make([]byte, 0, gatherBuf)}
}

// Write copies p (io.Writer, for archive/tar).
func (g *gather) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(g.buf)+len(p) > cap(g.buf) {
		if err := g.flush(); err != nil {
			return 0, err
		}
		if len(p) > cap(g.buf) {
			// Too big to copy, and p is the caller's to reuse at once.
			g.n += int64(len(p))
			if _, err := syswrite.Write(g.f.File, p); err != nil {
				return 0, g.fail(err)
			}
			g.wrote()
			return len(p), nil
		}
	}
	g.buf = append(g.buf, p...)
	g.n += int64(len(p))
	return len(p), nil
}

// writeRef queues p without copying it: p must not change until the next
// flush.
func (g *gather) writeRef(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	g.cut()
	g.iov = append(g.iov, p)
	g.n += int64(len(p))
	if len(g.iov) >= maxIov {
		return len(p), g.flush()
	}
	return len(p), nil
}

// cut closes the buffer's open piece so that a referenced one can follow.
func (g *gather) cut() {
	if g.mark < len(g.buf) {
		g.iov = append(g.iov, g.buf[g.mark:])
		g.mark = len(g.buf)
	}
}

// flush writes everything queued; afterwards no caller memory is
// referenced.
func (g *gather) flush() error {
	if g.err != nil {
		return g.err
	}
	g.cut()
	err := writeVectors(g.f.File, g.iov)
	clear(g.iov) // drop the references
	g.iov, g.buf, g.mark = g.iov[:0], g.buf[:0], 0
	if err != nil {
		return g.fail(err)
	}
	g.wrote()
	return nil
}

// copied records n bytes written to the file past the gather (a file to
// file copy), or the error that cut the copy short.
func (g *gather) copied(n int64, err error) error {
	g.n += n
	if err != nil {
		return g.fail(err)
	}
	g.wrote()
	return nil
}

func (g *gather) wrote() {
	g.written = g.n
	g.f.WriteBehind(g.n)
}

// fail records a write error, naming the output and the bytes lost.
func (g *gather) fail(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		err = pe.Err // it names the temporary file
	}
	g.err = fmt.Errorf("writing %s, bytes %d to %d: %w", g.f.Target(), g.written, g.n, err)
	return g.err
}

// writeSlices writes the pieces one by one: writeVectors' fallback.
func writeSlices(w io.Writer, iov [][]byte) error {
	for _, p := range iov {
		if _, err := w.Write(p); err != nil {
			return err
		}
	}
	return nil
}
