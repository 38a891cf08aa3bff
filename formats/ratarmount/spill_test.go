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
// few chunks stay in memory) and the index's keys are built from there;
// the database is the same bytes as one written from rows in memory, and
// the file is gone after Release.
func TestRowsSpill(t *testing.T) {
	var a archive
	for i := range 3000 {
		dir := fmt.Sprintf("d%d/e%d/", i%3, i%5)
		a.file(hdr{name: fmt.Sprintf("%ss%05d.jpg", dir, (i*7919)%3000)}, "x")
	}
	a.Write(make([]byte, 2*tarfile.BlockSize))
	data := a.Bytes()
	dir := t.TempDir()
	write := func(memory int) ([]byte, *Builder) {
		b := &Builder{Memory: memory, TempDir: dir}
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
		out := filepath.Join(dir, fmt.Sprintf("m%d.sqlite", memory))
		if err := b.WriteTo(out, fakeInfo{size: int64(len(data)), mtime: time.Unix(1577836800, 0)}); err != nil {
			t.Fatal(err)
		}
		db, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		return db, b
	}
	want, _ := write(0)
	for _, m := range []int{1, 5000} {
		got, b := write(m)
		if !bytes.Equal(got, want) {
			t.Errorf("Memory %d: the database differs from the one of rows in memory", m)
		}
		if len(b.spilled) == 0 || b.held > 2*max(m, 4<<10) {
			t.Errorf("Memory %d: %d chunks spilled, %d bytes of rows in memory", m, len(b.spilled), b.held)
		}
		b.Release()
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 3 {
		t.Errorf("%d files left in the directory, want the 3 databases", len(ents))
	}
}
