//go:build unix

package safefile

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with that id exists (a process of
// another user counts: EPERM means it exists).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
