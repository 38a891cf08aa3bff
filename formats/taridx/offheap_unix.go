//go:build unix

package taridx

import (
	"runtime"
	"syscall"
)

// offHeap returns n bytes of anonymous memory outside the Go heap, and a
// function that releases it. An index's rows (32 bytes each, all of them
// live while a fold is verified or listed) kept on the heap would double
// the collector's goal, and so the peak memory, of a command that makes
// garbage as it reads the shards; outside it they cost their size alone.
// Anonymous memory cannot fault as a mapped file cut short would.
func offHeap(n int) ([]byte, func()) {
	if n < 1<<20 {
		return make([]byte, n), func() {}
	}
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return make([]byte, n), func() {}
	}
	return b, func() { syscall.Munmap(b) }
}

// keepOffHeap releases the memory of x's rows once x is unreachable.
func keepOffHeap(x *Index, release func()) {
	runtime.AddCleanup(x, func(f func()) { f() }, release)
}
