package mapped

import (
	"fmt"
	"io"
	"os"

	"github.com/itarconv/itarconv/internal/syswrite"

	"golang.org/x/sys/unix"
)

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
			return fmt.Errorf("writing %s at offset %d: %w", f.Name(), off, ErrGone)
		}
		if err != nil {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
		// Past what was written: whole pieces, then part of one.
		for n > 0 {
			if n < len(pieces[0]) {
				pieces[0] = pieces[0][n:]
				break
			}
			n -= len(pieces[0])
			pieces = pieces[1:]
		}
	}
	return nil
}
