//go:build linux && (amd64 || arm64)

package barecat

import (
	"os"
	"syscall"
)

// startWriteback asks the kernel to start writing n bytes of f at off to
// the disk, without waiting (sync_file_range with SYNC_FILE_RANGE_WRITE).
// It is only a hint: the shard is fsynced before it is renamed, so an
// error is ignored.
func startWriteback(f *os.File, off, n int64) {
	const syncFileRangeWrite = 2 // SYNC_FILE_RANGE_WRITE
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall6(syscall.SYS_SYNC_FILE_RANGE, fd, uintptr(off), uintptr(n), syncFileRangeWrite, 0, 0)
	})
}
