package mds

import (
	"os"

	"golang.org/x/sys/unix"
)

// startWriteback starts writing a shard's pages out without waiting for
// the disk, so that the sync before the commit has little left to do.
func startWriteback(f *os.File) {
	unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
}
