package barecat

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestChunks: the runs that Cursors cuts, read with FilesBetween, are the
// files in order, each once; ReadFiles gives each file's bytes, and a
// flipped byte is that file's ErrCRC.
func TestChunks(t *testing.T) {
	ctx := context.Background()
	for _, c := range []string{"basic", "multishard", "empty"} {
		a := mustOpen(t, caseIndex(t, c))
		for _, order := range []Order{ByAddress, ByPath} {
			want := allFiles(t, a, order)
			for _, every := range []int{1, 2, 7, 1000} {
				cur, err := a.Cursors(ctx, order, every)
				if err != nil {
					t.Fatal(err)
				}
				var got []File
				for i := range cur {
					var to *Cursor
					if i+1 < len(cur) {
						to = &cur[i+1]
					}
					if err := a.FilesBetween(ctx, order, cur[i], to, func(f File) error { got = append(got, f); return nil }); err != nil {
						t.Fatal(err)
					}
				}
				if len(got) != len(want) {
					t.Fatalf("%s order %d every %d: %d files, want %d", c, order, every, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s order %d every %d: file %d is %s, want %s", c, order, every, i, got[i].Path, want[i].Path)
					}
				}
			}
			data, err := a.ReadFiles(want)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range want {
				if !bytes.Equal(data[i], readAll(t, a, f)) {
					t.Errorf("%s: %s differs", c, f.Path)
				}
			}
		}
		a.Close()
	}

	a := mustOpen(t, filepath.Join(copyDir(t, confDir(t, "basic")), "basic.barecat"))
	defer a.Close()
	files := allFiles(t, a, ByAddress)
	var victim File
	for _, f := range files {
		if f.Size > 0 && f.HasCRC {
			victim = f
			break
		}
	}
	shard := a.ShardPaths()[victim.Shard]
	b, _ := os.ReadFile(shard)
	b[victim.Offset] ^= 0xff
	os.WriteFile(shard, b, 0o644)
	_, err := a.ReadFiles(files)
	var e *Error
	if !errors.Is(err, ErrCRC) || !errors.As(err, &e) || e.Name != victim.Path {
		t.Errorf("got %v, want ErrCRC naming %s", err, victim.Path)
	}
}
