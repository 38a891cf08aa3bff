package tbl

import (
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

// startWritebackAll starts writing out every dirty page of f.
func startWritebackAll(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
