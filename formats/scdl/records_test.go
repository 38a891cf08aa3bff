package scdl

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/internal/sharedrec"
)

// FuzzRecords: whatever a run's directory holds under the records' names,
// reading them never panics, and only a record written whole counts.
func FuzzRecords(f *testing.F) {
	seed := openRecords(f.TempDir(), "k")
	f.Add("values-0-3", sharedrec.Seal(seed.valuesName(0, 3), []byte{7, 0, 0, 0, 0, 0, 0, 0}), 3)
	f.Add("header", sharedrec.Seal(seed.prefix+headerRecord, []byte{1, 'h'}), 1)
	f.Add("header", sharedrec.Seal(seed.prefix+headerRecord, []byte{0}), 1)
	f.Add("values-2-1", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, 4)
	f.Fuzz(func(t *testing.T, name string, content []byte, lo int) {
		dir := t.TempDir()
		r := openRecords(dir, "k")
		if filepath.Base(name) != name || name == "" || name == "." || name == ".." {
			return
		}
		if err := os.WriteFile(filepath.Join(dir, r.prefix+name), content, 0o644); err != nil {
			return
		}
		from, n := r.chain(lo)
		if from != 0 {
			want := r.valuesName(0, from)
			b, _ := os.ReadFile(filepath.Join(dir, want))
			if r.prefix+name != want || len(b) != 12 || !bytes.Equal(sharedrec.Seal(want, b[:8]), b) || from > lo {
				t.Errorf("the records reach shard %d with %d values from %q (%x)", from, n, name, content)
			}
		}
		if h, none := r.header(); (h != nil || none) && name != headerRecord {
			t.Errorf("a header from %q", name)
		}
	})
}

// TestRecordsRoundTrip: what a task records, another reads back.
func TestRecordsRoundTrip(t *testing.T) {
	r := openRecords(t.TempDir(), "k")
	r.putValues(0, 2, 10)
	r.putValues(2, 5, 32)
	r.putValues(5, 9, 1) // past the shards asked for
	if from, n := r.chain(6); from != 5 || n != 42 {
		t.Errorf("chain(6) = %d, %d; want 5, 42", from, n)
	}
	if _, none := r.header(); none {
		t.Errorf("no record of the header, read as none")
	}
	r.putHeader([]byte("H"))
	if h, none := r.header(); string(h) != "H" || none {
		t.Errorf("header %q, none %v", h, none)
	}
	r.putHeader(nil)
	if h, none := r.header(); h != nil || !none {
		t.Errorf("header %q, none %v; want none", h, none)
	}
	removeRecords(r.dir)
	if left, _ := os.ReadDir(r.dir); len(left) != 0 {
		t.Errorf("left after removeRecords: %v", left)
	}
}
