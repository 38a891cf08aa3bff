//go:build unix

package mapped

import (
	"errors"
	"math"
	"os"

	"golang.org/x/sys/unix"
)

func mapFile(f *os.File, off, size int64) ([]byte, error) {
	if size > math.MaxInt {
		return nil, ErrUnsupported
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var data []byte
	var merr error
	if err := rc.Control(func(fd uintptr) {
		data, merr = unix.Mmap(int(fd), off, int(size), unix.PROT_READ, unix.MAP_SHARED)
	}); err != nil {
		return nil, err
	}
	if merr != nil {
		return nil, errors.Join(ErrUnsupported, merr)
	}
	return data, nil
}

func unmapFile(data []byte) error { return unix.Munmap(data) }
