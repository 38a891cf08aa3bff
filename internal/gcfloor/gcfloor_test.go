package gcfloor

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// TestPercent: the goal is the floor while the live heap is small, twice
// the live heap past half the floor, and the percentage never past the
// one that puts the runtime's least goal at the floor (1600 for 64 MiB).
func TestPercent(t *testing.T) {
	const mib = 1 << 20
	for _, c := range []struct {
		live uint64
		want int
	}{{0, 1600}, {1, 1600}, {2 * mib, 1600}, {4 * mib, 1500}, {16 * mib, 300}, {32 * mib, 100}, {500 * mib, 100}} {
		if got := Percent(c.live, 64*mib); got != c.want {
			t.Errorf("Percent(%d MiB, 64 MiB) = %d, want %d", c.live/mib, got, c.want)
		}
	}
}

// keep is live while TestStart runs: more than half its floor.
var keep []byte

// TestStart: with GOGC set, nothing changes; otherwise the goal starts
// high, and after a collection follows the live heap (here more than
// half the floor: GOGC's 100).
func TestStart(t *testing.T) {
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "77")
	Start(64 << 20)
	if p := gcPercent(); p != 77 {
		t.Fatalf("with GOGC set: %d, want 77", p)
	}
	t.Setenv("GOGC", "")
	started.Store(false) // GOGC's call started nothing
	keep = make([]byte, 40<<20)
	for i := range keep {
		keep[i] = byte(i) // live, and touched
	}
	Start(64 << 20)
	if p := gcPercent(); p != 1600 {
		t.Errorf("at the start: %d, want 1600", p)
	}
	deadline := time.Now().Add(5 * time.Second)
	for gcPercent() != 100 {
		if time.Now().After(deadline) {
			t.Fatalf("GOGC %d after collections, want 100", gcPercent())
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	runtime.KeepAlive(keep)
}

func gcPercent() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}
