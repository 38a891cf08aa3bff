//go:build unix

package pathguard

import (
	"os"
	"syscall"
)

// openNonblocking opens without waiting for a FIFO's writer: the fstat
// that follows then refuses it.
func openNonblocking(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}
