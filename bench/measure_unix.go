//go:build unix

package bench

import (
	"os"
	"syscall"
	"time"
)

// MaxRSS is a finished child's peak resident memory, in bytes (Linux
// reports ru_maxrss in KiB).
func MaxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) * 1024
	}
	return 0
}

// OwnCPU is the CPU time this process and its waited-for children used.
func OwnCPU() float64 {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	t := func(ru *syscall.Rusage) float64 {
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	}
	return t(&self) + t(&children)
}
