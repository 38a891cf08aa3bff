package taridx

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestBatchOffset: a prepared batch keeps no entries, yet tells any entry's
// offset, the refused one's too, for the message that names it.
func TestBatchOffset(t *testing.T) {
	w, err := Create(filepath.Join(t.TempDir(), "x.taridx"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	long := strings.Repeat("s", maxStemLen+1)
	entries := []Entry{
		{Offset: 0, Stem: "a", Ext: "jpg", KeyHash: KeyHash("a")},
		{Offset: 1536, Stem: "a", Ext: "cls", KeyHash: KeyHash("a")},
		{Offset: 3072, Stem: long, Ext: "jpg", KeyHash: KeyHash(long)},
	}
	b := w.Prepare(entries)
	for i, want := range []uint64{0, 1536, 3072} {
		if got := b.Offset(i); got != want {
			t.Errorf("Offset(%d) = %d, want %d", i, got, want)
		}
	}
	if n := b.MemSize(); n < 2*RecordSize {
		t.Errorf("MemSize = %d, less than its rows", n)
	}
	var ee *EntryError
	if err := w.AddBatch(b); !errors.As(err, &ee) || ee.Entry != 2 {
		t.Fatalf("AddBatch = %v, want the third entry refused", err)
	}
}
