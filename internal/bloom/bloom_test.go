package bloom

import (
	"hash/maphash"
	"strconv"
	"testing"
)

// TestFilter: every added hash is found, across levels, and hashes never
// added are rarely (false positives well under 1e-4 at 3M elements).
func TestFilter(t *testing.T) {
	seed := maphash.MakeSeed()
	var f Filter
	if f.MayContain(1) {
		t.Fatal("empty filter contains 1")
	}
	const n = 3_000_000
	for i := range n {
		f.Add(maphash.String(seed, "in/"+strconv.Itoa(i)))
	}
	if f.Len() != n || len(f.levels) != 2 {
		t.Fatalf("%d elements in %d levels, want %d in 2", f.Len(), len(f.levels), n)
	}
	for i := range n {
		if !f.MayContain(maphash.String(seed, "in/"+strconv.Itoa(i))) {
			t.Fatalf("element %d lost", i)
		}
	}
	fp := 0
	for i := range n {
		if f.MayContain(maphash.String(seed, "out/"+strconv.Itoa(i))) {
			fp++
		}
	}
	if fp > n/10000 {
		t.Errorf("%d false positives in %d", fp, n)
	}
	t.Logf("%d false positives in %d; %d bytes", fp, n, 8*(len(f.levels[0].words)+len(f.levels[1].words)))
}
