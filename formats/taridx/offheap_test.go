package taridx

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
)

// TestReadFileLarge: an index big enough for its rows to be kept outside
// the heap reads back row for row, and its memory is released once the
// index is unreachable without harm to a second one read meanwhile.
func TestReadFileLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.taridx")
	w, err := Create(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50_000 // 1.6 MB of rows
	for i := 0; i < n; i++ {
		stem := fmt.Sprintf("s%06d", i/2)
		if err := w.Add(Entry{Fid: uint16(i % 3), Offset: uint64(i) * 1024, Size: uint64(i), Stem: stem, Ext: []string{"jpg", "cls"}[i%2], KeyHash: KeyHash(stem)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		x, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if x.Len() != n || x.Header.NStems != n/2 {
			t.Fatalf("%d rows, %d stems", x.Len(), x.Header.NStems)
		}
		for _, i := range []int{0, 1, n / 2, n - 1} {
			r := x.Row(i)
			if r.Offset != uint64(i)*1024 || r.Size != uint64(i) || int(r.Fid) != i%3 || int(r.ExtID) != i%2 || r.KeyHash != KeyHash(fmt.Sprintf("s%06d", i/2)) {
				t.Fatalf("round %d row %d: %+v", round, i, r)
			}
		}
		runtime.GC()
	}
}
