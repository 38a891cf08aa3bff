//go:build unix

// Package offheap hands out memory outside the Go heap for large tables a
// reader holds for its whole life (an index's rows). On the heap they
// would double the collector's goal, and so the peak memory, of a command
// that makes garbage as it works; outside it they cost their size alone.
package offheap

import "syscall"

// Alloc returns n zeroed bytes of anonymous memory and a function that
// releases them (small sizes come from the heap). Anonymous memory cannot
// fault as a mapped file cut short would. The bytes must not be used after
// release.
func Alloc(n int) ([]byte, func()) {
	if n < 1<<20 {
		return make([]byte, n), func() {}
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), func() {}
	}
	return b, func() { syscall.Munmap(b) }
}
