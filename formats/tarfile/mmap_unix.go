//go:build unix

package tarfile

import (
	"errors"
	"os"
	"syscall"
)

// mmapFile maps a whole file read-only.
func mmapFile(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, errors.New("cannot map an empty or oversized file")
	}
	return syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
}

func munmapFile(b []byte) error { return syscall.Munmap(b) }
