package gcfloor

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
)

// minHeap is the runtime's least heap goal at GOGC=100, which it scales
// with GOGC: a percentage past floor/minHeap*100 would put the goal past
// the floor whatever the live heap.
const minHeap = 4 << 20

// started: the tuning is started once in a process (the first floor
// stands).
var started atomic.Bool

// sentinel is an object that becomes garbage at once: its finalizer runs
// after each collection, and arms it again.
type sentinel struct {
	_ *byte // a pointer: not in the tiny allocator, finalized alone
	_ [16]byte
}

// Start keeps the heap goal at floor bytes at least, from now on, unless
// GOGC is set (the user's choice); once a process. The percentage is set again after
// every collection, from the heap found live.
func Start(floor uint64) {
	if os.Getenv("GOGC") != "" || floor == 0 || !started.CompareAndSwap(false, true) {
		return
	}
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	var tune func(*sentinel)
	tune = func(s *sentinel) {
		metrics.Read(live)
		debug.SetGCPercent(Percent(live[0].Value.Uint64(), floor))
		runtime.SetFinalizer(s, tune)
	}
	debug.SetGCPercent(Percent(0, floor))
	runtime.SetFinalizer(&sentinel{}, tune)
}

// Percent is the GOGC whose goal for a live heap of live bytes is floor
// (at most floor/minHeap*100: the runtime's least goal is then the
// floor), or 100 where twice the live heap is more.
func Percent(live, floor uint64) int {
	most := max(floor/minHeap*100, 100)
	if live >= floor/2 {
		return 100
	}
	if live == 0 {
		return int(most)
	}
	return int(min(floor/live*100-100, most))
}
