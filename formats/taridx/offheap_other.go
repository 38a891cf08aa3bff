//go:build !unix

package taridx

// offHeap returns n bytes of heap memory where no anonymous mapping exists.
func offHeap(n int) ([]byte, func()) { return make([]byte, n), func() {} }

func keepOffHeap(*Index, func()) {}
