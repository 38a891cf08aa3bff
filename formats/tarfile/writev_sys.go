//go:build darwin || linux || openbsd || illumos

package tarfile

import (
	"io"
	"os"

	"github.com/itarconv/itarconv/internal/syswrite"
	"golang.org/x/sys/unix"
)

// writeVectors writes iov to f in order with writev (syswrite.MaxWrite
// bytes a call), resuming after partial writes.
func writeVectors(f *os.File, iov [][]byte) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return writeSlices(f, iov)
	}
	// Errors are the system's, bare: the caller names the output.
	var next [][]byte
	for len(iov) > 0 {
		var n int
		var werr error
		next = syswrite.Next(next, iov, len(iov))
		if err := rc.Write(func(fd uintptr) bool {
			n, werr = unix.Writev(int(fd), next)
			return werr != unix.EAGAIN
		}); err != nil {
			return err
		}
		if werr == unix.EINTR {
			continue
		}
		if werr != nil {
			return werr
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		iov = syswrite.Advance(iov, n)
	}
	return nil
}
