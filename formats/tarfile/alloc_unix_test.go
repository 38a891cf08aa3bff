//go:build unix

package tarfile

import (
	"os"
	"syscall"
)

// allocatedBytes is the disk space a file takes, or -1 when unknown.
func allocatedBytes(fi os.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int64(st.Blocks) * 512
	}
	return -1
}
