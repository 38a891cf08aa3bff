package mapped

import (
	"io"
	"os"
	"sync/atomic"

	"github.com/itarconv/itarconv/internal/syswrite"

	"golang.org/x/sys/unix"
)

// gone is the GoneError of pieces written from off in f: the first whose
// last byte faults when read (a file cut short loses its end) is the
// one the kernel could not copy.
func gone(f *os.File, pieces [][]byte, off int64) *GoneError {
	e := &GoneError{Output: f.Name(), Offset: off}
	for _, p := range pieces {
		if len(p) > 0 && Guard(func() error { probed.Store(uint32(p[len(p)-1])); return nil }) != nil {
			e.Piece = p
			return e
		}
		e.Offset += int64(len(p))
	}
	e.Offset = off
	return e
}

// probed keeps a probe's read from being dropped as unused.
var probed atomic.Uint32

// WritePieces writes pieces back to back at off in f, with as few vectored
// writes as the system takes (IOV_MAX pieces, syswrite.MaxWrite bytes
// each).
func WritePieces(f *os.File, pieces [][]byte, off int64) error {
	const iovMax = 1024
	var iov [][]byte
	for len(pieces) > 0 {
		iov = syswrite.Next(iov, pieces, iovMax)
		n, err := unix.Pwritev(int(f.Fd()), iov, off)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EFAULT {
			// Pieces mapped from a source file that was cut short since.
			return gone(f, pieces, off)
		}
		if err != nil {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
		pieces = syswrite.Advance(pieces, n)
	}
	return nil
}
