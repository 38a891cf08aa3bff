package filecopy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
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
