package atonce

import (
	"sync"
	"sync/atomic"
)

// Files is how many stats or opens of a list of files are in flight at
// once: enough to hide a network file system's round trips, few enough
// not to crowd its server.
const Files = 16

// Each calls f(i) for every i from 0 to n-1, on up to width goroutines
// at once (at least one), and returns once every call started has
// returned. A call that returns true decides: the calls of the items
// after it that have not started are skipped, while every item before it
// is still called. So the first item, in order, for which f returns true
// is the same whichever call ends first; Each returns it, or n where
// none did.
func Each(n, width int, f func(i int) (decided bool)) int {
	var first atomic.Int64 // the lowest item decided so far
	first.Store(int64(n))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(1, min(width, n)) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= first.Load() { // past an item that decided, or the end
					return
				}
				if f(int(i)) {
					for at := first.Load(); i < at && !first.CompareAndSwap(at, i); at = first.Load() {
					}
				}
			}
		})
	}
	wg.Wait()
	return int(first.Load())
}
