package mapped

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMap(t *testing.T) {
	page := os.Getpagesize()
	content := make([]byte, 5*page+123)
	for i := range content {
		content[i] = byte(i * 13 >> 3)
	}
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, c := range []struct{ off, n int64 }{{0, 1}, {1, 10}, {int64(page) - 1, 2}, {int64(page), int64(page)}, {123, int64(len(content)) - 123}} {
		r, err := Map(f, c.off, c.n)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Bytes(c.off, c.n); !bytes.Equal(got, content[c.off:c.off+c.n]) {
			t.Errorf("bytes %d+%d differ", c.off, c.n)
		}
		if err := r.Close(); err != nil || r.Close() != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := Map(f, 0, 0); err == nil || errors.Is(err, ErrUnsupported) {
		t.Errorf("empty region: %v, want an error other than ErrUnsupported", err)
	}

	// Bytes cut off after mapping: a fault, reported as ErrGone.
	r, err := Map(f, 0, int64(len(content)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := os.Truncate(path, int64(page)); err != nil {
		t.Fatal(err)
	}
	var sum byte
	err = Guard(func() error {
		for _, b := range r.Bytes(3*int64(page), int64(page)) {
			sum += b
		}
		return nil
	})
	if !errors.Is(err, ErrGone) {
		t.Fatalf("reading past the new end: %v, want ErrGone", err)
	}
	if err := Guard(func() error { sum += r.Bytes(0, 1)[0]; return nil }); err != nil {
		t.Errorf("reading what is left: %v", err)
	}
}
