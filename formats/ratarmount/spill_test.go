package ratarmount

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
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

// TestDecodeKey: decodeKey reads a row's key and passes over the rest as
// decodeRow reads them, whatever the row holds.
func TestDecodeKey(t *testing.T) {
	rows := []row{
		{dir: "/a", name: "b", linkname: "c/d", offsetHeader: 1 << 40, offset: -3, size: 1 << 62, mtime: -1.5, mode: 0o40755, typ: '5', uid: -1, gid: 1 << 33, sparse: true},
		{dir: "/a", name: "", offsetHeader: 0},
		{dir: "", name: "x", linkname: strings.Repeat("l", 300), offsetHeader: 512, uid: 1 << 50},
	}
	var e []byte
	for i := range rows {
		e = encodeRow(e, &rows[i], i > 0 && rows[i].dir == rows[i-1].dir)
	}
	var dir string
	for i, p := 0, e; len(p) > 0; i++ {
		var name string
		var off int64
		p, dir, name, off = decodeKey(p, dir)
		if dir != rows[i].dir || name != rows[i].name || off != rows[i].offsetHeader {
			t.Fatalf("row %d: key %q %q %d, want %q %q %d", i, dir, name, off, rows[i].dir, rows[i].name, rows[i].offsetHeader)
		}
	}
}
