package tbl

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing out the dirty pages of a range of f
// without waiting for the disk: the sync that commits the file then has
// little left to write. An error only leaves the range to that sync.
func startWriteback(f *os.File, off, n int64) {
	if n > 0 {
		unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
	}
}

// writePieces writes pieces back to back at off, with as few vectored
// writes as the system takes (IOV_MAX pieces each).
func writePieces(f *os.File, pieces [][]byte, off int64) error {
	const iovMax = 1024
	for len(pieces) > 0 {
		batch := pieces[:min(len(pieces), iovMax)]
		n, err := unix.Pwritev(int(f.Fd()), batch, off)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "pwritev", Path: f.Name(), Err: err}
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		off += int64(n)
		// Past what was written: whole pieces, then part of one.
		for n > 0 && len(pieces) > 0 {
			if n < len(pieces[0]) {
				rest := append([][]byte{pieces[0][n:]}, pieces[1:]...)
				pieces, n = rest, 0
				break
			}
			n -= len(pieces[0])
			pieces = pieces[1:]
		}
	}
	return nil
}
