//go:build !unix

// Package offheap hands out memory outside the Go heap for large tables a
// reader holds for its whole life; here, where no anonymous mapping
// exists, from the heap.
package offheap

// Alloc returns n zeroed bytes and a function that releases them.
func Alloc(n int) ([]byte, func()) { return make([]byte, n), func() {} }
