//go:build unix

package fold

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// dupFile is a new *os.File on f's open file (its own descriptor, closed
// on exec; the same file whatever its path names since); nil for nil.
func dupFile(f *os.File) (*os.File, error) {
	if f == nil {
		return nil, nil
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	var fd int
	var derr error
	if err := rc.Control(func(old uintptr) { fd, derr = unix.FcntlInt(old, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, fmt.Errorf("%s: %w", f.Name(), derr)
	}
	return os.NewFile(uintptr(fd), f.Name()), nil
}
