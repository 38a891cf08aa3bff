package filecopy

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRangeShortSource: a source shorter than the range asked for is
// io.ErrUnexpectedEOF, whether the kernel copied what there was or the
// buffer read nothing at all (an empty source, which copy_file_range
// copies nothing of).
func TestRangeShortSource(t *testing.T) {
	dir := t.TempDir()
	for _, data := range []string{"12345", ""} {
		src := filepath.Join(dir, "src")
		os.WriteFile(src, []byte(data), 0o644)
		s, err := os.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		d, err := os.Create(filepath.Join(dir, "dst"))
		if err != nil {
			t.Fatal(err)
		}
		n, err := Range(d, 0, s, 0, 10)
		if !errors.Is(err, io.ErrUnexpectedEOF) || n > int64(len(data)) || !strings.Contains(err.Error(), "src") {
			t.Errorf("%d bytes of source: copied %d, %v; want io.ErrUnexpectedEOF naming it", len(data), n, err)
		}
		if data == "" && !strings.Contains(err.Error(), "reading 10 bytes at 0") {
			t.Errorf("empty source: %v, want the buffered read's error", err)
		}
		s.Close()
		d.Close()
	}
}

// TestRangeAcrossFileSystems: from a file on another file system (where
// copy_file_range may refuse, EXDEV, and the buffer copies), every byte
// lands at its offset, over several buffers.
func TestRangeAcrossFileSystems(t *testing.T) {
	shm, err := os.MkdirTemp("/dev/shm", "filecopy")
	if err != nil {
		t.Skip("no /dev/shm:", err)
	}
	defer os.RemoveAll(shm)
	data := make([]byte, 2*bufSize+333)
	for i := range data {
		data[i] = byte(i*13 + i>>9)
	}
	srcPath := filepath.Join(shm, "src")
	if err := os.WriteFile(srcPath, data, 0o644); err != nil {
		t.Skip("cannot write /dev/shm:", err)
	}
	src, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dstPath := filepath.Join(t.TempDir(), "dst")
	dst, err := os.Create(dstPath)
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	n, err := Range(dst, 7, src, 100, int64(len(data))-100)
	if err != nil || n != int64(len(data))-100 {
		t.Fatalf("copied %d, %v", n, err)
	}
	got, _ := os.ReadFile(dstPath)
	if len(got) != 7+len(data)-100 || !bytes.Equal(got[7:], data[100:]) || !bytes.Equal(got[:7], make([]byte, 7)) {
		t.Errorf("the copy differs (%d bytes)", len(got))
	}
}
