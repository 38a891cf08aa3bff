package ratarmount

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// TestRowsSpill: past Memory, a Builder's rows go to a temporary file (a
// few chunks stay in memory), and past KeysMemory the index's keys are
// built again from the rows; the database is the same bytes as one
// written from rows and keys in memory, and the file is gone after
// Release.
func TestRowsSpill(t *testing.T) {
	var a archive
	for i := range 3000 {
		dir := fmt.Sprintf("d%d/e%d/", i%3, i%5)
		a.file(hdr{name: fmt.Sprintf("%ss%05d.jpg", dir, (i*7919)%3000)}, "x")
	}
	a.Write(make([]byte, 2*tarfile.BlockSize))
	data := a.Bytes()
	dir := t.TempDir()
	write := func(memory, keys int) ([]byte, *Builder) {
		b := &Builder{Memory: memory, KeysMemory: keys, TempDir: dir}
		s := tarfile.NewScanner(bytes.NewReader(data), int64(len(data)), "", tarfile.Options{})
		for {
			m, err := s.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := b.Add(m); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(dir, fmt.Sprintf("m%d-%d.sqlite", memory, keys))
		if err := b.WriteTo(out, fakeInfo{size: int64(len(data)), mtime: time.Unix(1577836800, 0)}); err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return db, b
	}
	want, _ := write(0, 0)
	for _, m := range [][2]int{{1, 0}, {5000, 1}, {5000, 1 << 20}, {1, 1}} {
		got, b := write(m[0], m[1])
		if !bytes.Equal(got, want) {
			t.Errorf("Memory, KeysMemory %d: the database differs from the one of rows in memory", m)
		}
		if len(b.spilled) == 0 || b.held > 2*max(m[0], 4<<10) {
			t.Errorf("Memory %d: %d chunks spilled, %d bytes of rows in memory", m[0], len(b.spilled), b.held)
		}
		b.Release()
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 5 {
		t.Errorf("%d files left in the directory, want the 5 databases", len(ents))
	}
}
