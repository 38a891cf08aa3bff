package atonce

import (
	"sync/atomic"
	"testing"
)

// TestEach: every item is called once where none decides; where some do,
// the first of them, in order, is returned whichever call ends first,
// and every item before it was called.
func TestEach(t *testing.T) {
	for _, width := range []int{0, 1, 3, 16} {
		const n = 1000
		var calls [n]atomic.Int32
		if got := Each(n, width, func(i int) bool { calls[i].Add(1); return false }); got != n {
			t.Errorf("width %d: none decides: %d, want %d", width, got, n)
		}
		for i := range calls {
			if c := calls[i].Load(); c != 1 {
				t.Fatalf("width %d: item %d called %d times", width, i, c)
			}
		}
		for range 20 {
			var called [n]atomic.Bool
			got := Each(n, width, func(i int) bool { called[i].Store(true); return i == 700 || i == 400 || i == 401 })
			if got != 400 {
				t.Fatalf("width %d: %d decided first, want 400", width, got)
			}
			for i := range 400 {
				if !called[i].Load() {
					t.Fatalf("width %d: item %d, before the first that decided, was not called", width, i)
				}
			}
		}
	}
	if got := Each(0, 4, func(int) bool { t.Fatal("called"); return false }); got != 0 {
		t.Errorf("no items: %d", got)
	}
}
