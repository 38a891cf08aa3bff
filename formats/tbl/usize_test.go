package tbl

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestUncompressedSizeZero: a v2 sample stored uncompressed whose
// uncompressed_size is 0 (the format's "not compressed") is read as its
// stored bytes, by every path.
func TestUncompressedSizeZero(t *testing.T) {
	base := baseFiles(t)
	// Sample 1 of "v2" is 300 raw PNG bytes; its entry starts at 88.
	b := set32(88+12, 0)(bytes.Clone(base["v2"]))
	path := filepath.Join(t.TempDir(), "usize0.tbl")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer r.Close()
	s := r.Sample(1)
	if s.Size != 300 || s.StoredSize != 300 || s.Compressed {
		t.Fatalf("sample 1: size %d stored %d compressed %v, want 300 300 false", s.Size, s.StoredSize, s.Compressed)
	}
	want := randomBytes(1, 300)
	got, err := r.ReadSample(1, nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Errorf("ReadSample: %d bytes, %v", len(got), err)
	}
	v, err := r.ViewSamples(0, r.Len())
	if err != nil {
		t.Fatalf("ViewSamples: %v", err)
	}
	if !bytes.Equal(v.Data[1], want) {
		t.Errorf("ViewSamples: sample 1 is %d bytes, not the stored ones", len(v.Data[1]))
	}
	v.Release()
	if err := r.Verify(); err != nil {
		t.Errorf("Verify: %v", err)
	}
}
