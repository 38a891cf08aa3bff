//go:build unix

package tarfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestMmapFileShrinks: a shard truncated while it is scanned through a
// mapping faults on the pages past its new end; that is an ErrTruncated
// error, not a crash.
func TestMmapFileShrinks(t *testing.T) {
	var a archive
	for i := 0; i < 8; i++ {
		a.file("f"+string(rune('a'+i))+".bin", pattern(3*4096, byte(i)))
	}
	data := a.end()
	path := filepath.Join(t.TempDir(), "train_0000.tar")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path, Options{Strategy: StrategyMmap})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m, err := f.Next(); err != nil || string(m.Name) != "fa.bin" {
		t.Fatalf("first member: %v", err)
	}
	if err := os.Truncate(path, 4096); err != nil {
		t.Fatal(err)
	}
	var n int
	for {
		_, err = f.Next()
		if err != nil {
			break
		}
		n++
	}
	if err == io.EOF || !errors.Is(err, ErrTruncated) {
		t.Fatalf("after %d more members: %v, want ErrTruncated", n, err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Path != path || e.Offset <= 0 {
		t.Errorf("error %v does not locate the fault", err)
	}
}
