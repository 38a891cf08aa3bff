//go:build unix

package formattest

import (
	"os"
	"syscall"
)

const canFIFO = true

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o644) }

// unblock lets a call waiting on the FIFO at path go on: a writer comes
// and goes, so that its open returns and its read sees the end.
func unblock(path string) {
	if f, err := os.OpenFile(path, os.O_RDWR|syscall.O_NONBLOCK, 0); err == nil {
		f.Close()
	}
}
