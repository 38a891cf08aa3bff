package safefile

import "golang.org/x/sys/unix"

const canWriteBehind = true

// startWriteback starts writing out the dirty pages of a range, without
// waiting for them to reach the disk. An error only means the range is
// left to the final sync.
func startWriteback(fd uintptr, off, n int64) {
	unix.SyncFileRange(int(fd), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
