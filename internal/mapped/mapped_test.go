package mapped

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// patternFile writes n bytes of a pattern to a file and opens it (closed
// with the test).
func patternFile(t *testing.T, n int) (content []byte, path string, f *os.File) {
	t.Helper()
	content = make([]byte, n)
	for i := range content {
		content[i] = byte(i * 13 >> 3)
	}
	path = filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return content, path, f
}

func TestMap(t *testing.T) {
	page := os.Getpagesize()
	content, path, f := patternFile(t, 5*page+123)
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

	// Bytes cut off after mapping: a fault, reported as ErrGone. (The
	// file grows past readBelow first, so that the region is mapped.)
	big := make([]byte, readBelow+5*page)
	copy(big, content)
	if err := os.WriteFile(path, big, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Map(f, 0, int64(len(big)))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.read {
		t.Fatalf("a region of %d bytes was read, not mapped", len(big))
	}
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

// TestMapSmallRead: a region under readBelow is read: its bytes are the
// file's at the call, kept when the file is cut short after, and a file
// already shorter than the region is ErrGone at once, naming it.
func TestMapSmallRead(t *testing.T) {
	content, path, f := patternFile(t, 3<<10)
	r, err := Map(f, 100, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if !r.read {
		t.Fatal("a region of 2000 bytes was mapped, not read")
	}
	if err := os.Truncate(path, 10); err != nil {
		t.Fatal(err)
	}
	if got := r.Bytes(300, 50); !bytes.Equal(got, content[300:350]) {
		t.Errorf("bytes 300+50 differ")
	}
	if name, off, ok := r.Where(r.Bytes(1000, 8)); !ok || name != path || off != 1000 {
		t.Errorf("Where = %q, %d, %v; want %q, 1000, true", name, off, ok, path)
	}
	if err := r.Close(); err != nil || r.Close() != nil {
		t.Errorf("Close: %v", err)
	}
	_, err = Map(f, 0, 100)
	if !errors.Is(err, ErrGone) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "bytes 0 to 100") {
		t.Errorf("a region past the end of a 10-byte file: %v, want ErrGone naming %s and the bytes", err, path)
	}
}

// BenchmarkRegion: a region mapped or read, every byte touched once (as
// a checksum does), then closed, by one goroutine: the figures behind
// readBelow (go test ./internal/mapped -run '^$' -bench Region).
func BenchmarkRegion(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f")
	if err := os.WriteFile(path, make([]byte, 16<<20), 0o644); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int64{4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20} {
		for _, how := range []struct {
			name string
			fn   func(*os.File, int64, int64) (*Region, error)
		}{{"map", mapRegion}, {"read", readRegion}} {
			b.Run(fmt.Sprintf("%s/%dKiB", how.name, size>>10), func(b *testing.B) {
				b.SetBytes(size)
				var sum byte
				for b.Loop() {
					r, err := how.fn(f, 4096, size)
					if err != nil {
						b.Fatal(err)
					}
					for i, data := int64(0), r.Bytes(4096, size); i < size; i += 64 {
						sum += data[i]
					}
					r.Close()
				}
				_ = sum
			})
		}
	}
}
