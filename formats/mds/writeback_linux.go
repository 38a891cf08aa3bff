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

// preallocate reserves n bytes of disk for a shard about to be written,
// its size left as it is (the shard is truncated to its size once
// complete, which frees what it did not take). The writes then land in
// blocks already allocated: Linux's buffered writes into them cost about
// half what writes that allocate as they go do (ext4's delayed
// allocation). Where the file system cannot, nothing is reserved.
func preallocate(f *os.File, n int64) {
	unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, 0, n)
}
