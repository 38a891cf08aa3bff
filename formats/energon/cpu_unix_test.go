//go:build unix

package energon

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time the process has used, all threads (the
// garbage collector's included): on a shared machine it says more than
// the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
