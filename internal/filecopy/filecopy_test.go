package filecopy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRangeAndAppend(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 3<<20+17)
	for i := range data {
		data[i] = byte(i*7 + i>>11)
	}
	srcPath := filepath.Join(dir, "src")
	if err := os.WriteFile(srcPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.Create(filepath.Join(dir, "dst"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if _, err := dst.Write([]byte("head")); err != nil {
		t.Fatal(err)
	}
	if err := Append(dst, src, 5, 1<<20); err != nil {
		t.Fatal(err)
	}
	if err := Append(dst, src, 2<<20, int64(len(data))-2<<20); err != nil {
		t.Fatal(err)
	}
	if n, err := Range(dst, 1, src, 0, 2); n != 2 || err != nil {
		t.Fatalf("Range: %d, %v", n, err)
	}
	got, err := os.ReadFile(dst.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := append(append([]byte("h"), data[:2]...), 'd')
	want = append(append(want, data[5:5+1<<20]...), data[2<<20:]...)
	if !bytes.Equal(got, want) {
		t.Fatalf("copied %d bytes, not the %d expected", len(got), len(want))
	}
	if _, err := Range(dst, 0, src, int64(len(data))-3, 10); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a range past the end: %v", err)
	}
}

// TestBadRange: a size or offset read from a hostile file, negative, is
// an error naming the file, not a panic; a huge one allocates nothing
// from it and ends where the source does.
func TestBadRange(t *testing.T) {
	dir := t.TempDir()
	src, _ := os.Create(filepath.Join(dir, "src"))
	defer src.Close()
	src.Write([]byte("0123456789"))
	dst, _ := os.Create(filepath.Join(dir, "dst"))
	defer dst.Close()
	for _, c := range [][3]int64{{0, 0, -5}, {0, -1, 3}, {-1, 0, 3}} {
		if _, err := Range(dst, c[0], src, c[1], c[2]); !errors.Is(err, ErrRange) || !strings.Contains(err.Error(), src.Name()) {
			t.Errorf("Range(%d, %d, %d): %v", c[0], c[1], c[2], err)
		}
	}
	if err := Append(dst, src, 2, 1<<62); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a claimed size of 2^62: %v", err)
	}
}

// TestCancelled: a copy stops when its context is done.
func TestCancelled(t *testing.T) {
	dir := t.TempDir()
	src, _ := os.Create(filepath.Join(dir, "src"))
	defer src.Close()
	src.Write(make([]byte, 3<<20))
	dst, _ := os.Create(filepath.Join(dir, "dst"))
	defer dst.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if n, err := RangeContext(ctx, dst, 0, src, 0, 3<<20); n != 0 || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), src.Name()) {
		t.Errorf("a cancelled copy: %d, %v", n, err)
	}
	if err := AppendContext(ctx, dst, src, 0, 3<<20); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled append: %v", err)
	}
}
