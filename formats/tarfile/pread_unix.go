//go:build unix

package tarfile

import (
	"io"
	"os"
	"syscall"
)

// rawReaderAt reads a file with pread(2) directly. os.File.ReadAt takes the
// runtime poller's lock around every call, which costs a fifth of a scan of
// large members (one read per header).
type rawReaderAt struct {
	f  *os.File // kept so the descriptor stays open
	fd int
}

func (r rawReaderAt) ReadAt(p []byte, off int64) (int, error) {
	total := 0
	for total < len(p) {
		n, err := syscall.Pread(r.fd, p[total:], off+int64(total))
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return total, &os.PathError{Op: "pread", Path: r.f.Name(), Err: err}
		}
		if n == 0 {
			return total, io.EOF
		}
		total += n
	}
	return total, nil
}

// fastReaderAt returns a direct pread reader for a regular file.
func fastReaderAt(f *os.File) io.ReaderAt {
	return rawReaderAt{f: f, fd: int(f.Fd())}
}
