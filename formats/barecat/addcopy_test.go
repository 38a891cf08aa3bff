package barecat

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
)

// AddCopy's files, copied by the kernel in runs of adjacent bytes, mixed
// with Add's and rolled over into new shards, hold the same bytes and
// CRC-32C as if each had been added with Add; the copy through a buffer,
// where the kernel cannot copy, gives the same.
func TestAddCopy(t *testing.T) {
	dir := t.TempDir()
	data := make([]byte, 64<<10)
	for i := range data {
		data[i] = byte(i*7 + i>>8)
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
		add       bool // with Add, from memory
	}
	// Runs of adjacent pieces, a gap, a piece from memory in between, and
	// a shard limit that rolls over in the middle of a run.
	pieces := []piece{{0, 1000, false}, {1000, 3000, false}, {4000, 1, false}, {5000, 2000, false},
		{7000, 500, true}, {7500, 9000, false}, {16500, 9000, false}, {25500, 0, false}, {25500, 19000, false}, {100, 50, true}}
	for _, kernel := range []bool{true, false} {
		t.Run(fmt.Sprintf("kernel=%v", kernel), func(t *testing.T) {
			if !kernel {
				saved := copyFileRangeFn
				copyFileRangeFn = func(*os.File, copyRun) (int64, error) { return 0, nil }
				t.Cleanup(func() { copyFileRangeFn = saved })
			}
			out := filepath.Join(t.TempDir(), "x.barecat")
			w, err := Create(out, WriterOptions{ShardSizeLimit: 20000})
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range pieces {
				f := File{Path: fmt.Sprintf("f%02d", i), Size: p.size}
				b := data[p.off : p.off+p.size]
				if p.add {
					err = w.Add(f, bytes.NewReader(b))
				} else {
					err = w.AddCopy(f, src, p.off, crc32.Checksum(b, castagnoli))
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
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
		})
	}
}
