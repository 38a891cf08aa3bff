//go:build unix

package pathguard

import (
	"io/fs"
	"os"
	"syscall"
)

// openNonblocking opens without waiting for a FIFO's writer: the fstat
// that follows then refuses it.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// identity is what os.SameFile compares (device and inode), as a map key.
func identity(fi fs.FileInfo) (fileID, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}
