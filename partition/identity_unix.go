//go:build unix

package partition

import (
	"io/fs"
	"syscall"
)

// fileKey is what tells files apart: device and inode.
type fileKey struct{ dev, ino uint64 }

func identity(fi fs.FileInfo) (fileKey, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileKey{}, false
	}
	return fileKey{uint64(st.Dev), uint64(st.Ino)}, true
}
