package barecat

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// AddBytes' files, staged one after the other in a buffer (joined into
// one write), mixed with Add's and AddCopy's and rolled over into new
// shards, hold their bytes and CRC-32C; AfterWrite's function runs once
// they are written, after which the buffer may be reused without
// changing the archive.
func TestAddBytes(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i*13 + i>>9)
	}
	srcPath := filepath.Join(dir, "src.bin")
	if err := os.WriteFile(srcPath, data, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := os.Open(srcPath)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	type piece struct {
		off, size int64
		how       string // "bytes", "add", "copy"
	}
	pieces := []piece{{0, 1000, "bytes"}, {1000, 3000, "bytes"}, {4000, 0, "bytes"}, {4000, 1, "bytes"}, {5000, 2000, "bytes"},
		{7000, 500, "add"}, {7500, 9000, "bytes"}, {16500, 9000, "copy"}, {25500, 19000, "bytes"}, {44500, 700, "bytes"}, {100, 50, "bytes"}}
	out := filepath.Join(dir, "x.barecat")
	w, err := Create(out, WriterOptions{ShardSizeLimit: 20000})
	if err != nil {
		t.Fatal(err)
	}
	stage := bytes.Clone(data) // the caller's buffer, reused once written
	written := 0
	for i, p := range pieces {
		f := File{Path: fmt.Sprintf("f%02d", i), Size: p.size}
		b := data[p.off : p.off+p.size]
		switch p.how {
		case "bytes":
			err = w.AddBytes(f, stage[p.off:p.off+p.size], crc32.Checksum(b, castagnoli))
		case "add":
			err = w.Add(f, bytes.NewReader(b))
		case "copy":
			err = w.AddCopy(f, src, p.off, crc32.Checksum(b, castagnoli))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddBytes(File{Path: "short", Size: 5}, stage[:4], 0); err == nil {
		t.Fatal("AddBytes with fewer bytes than the size: no error")
	}
	done := make(chan struct{})
	if err := w.AfterWrite(func() { written++; close(done) }); err != nil {
		t.Fatal(err)
	}
	<-done
	clear(stage) // the Writer is done with it
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if written != 1 {
		t.Fatalf("AfterWrite's function ran %d times", written)
	}
	a := mustOpen(t, out)
	defer a.Close()
	if len(a.ShardPaths()) < 3 {
		t.Errorf("%d shards, want a rollover or two", len(a.ShardPaths()))
	}
	for i, p := range pieces {
		f, err := a.Lookup(fmt.Sprintf("f%02d", i))
		if err != nil {
			t.Fatal(err)
		}
		got, err := a.ReadFile(f) // checks the CRC-32C
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, data[p.off:p.off+p.size]) {
			t.Errorf("f%02d: %d bytes differ", i, len(got))
		}
	}
}
