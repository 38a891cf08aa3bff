package mds

import (
	"fmt"
	"io"
	"os"

	"github.com/itarconv/itarconv/internal/mapped"

	"golang.org/x/sys/unix"
)

// writePieces writes pieces back to back at off, with as few vectored
// writes as the system takes (IOV_MAX pieces each).
func writePieces(f *os.File, pieces [][]byte, off int64) error {
	const iovMax = 1024
	for len(pieces) > 0 {
		n, err := unix.Pwritev(int(f.Fd()), pieces[:min(len(pieces), iovMax)], off)
		if err == unix.EINTR {
			continue
		}
		if err == unix.EFAULT {
			// Pieces mapped from a source file that was cut short since.
			return fmt.Errorf("writing %s at offset %d: %w", f.Name(), off, mapped.ErrGone)
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
