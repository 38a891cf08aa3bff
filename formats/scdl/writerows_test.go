package scdl

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// TestWriteRowsFromSource: an archive read as rows (NewSource, in both
// modes, with cells in several batches and Run shards) is rebuilt by
// WriteRows byte for byte; Overwrite replaces an existing directory.
func TestWriteRowsFromSource(t *testing.T) {
	n := 0
	for _, c := range conformanceCases(t) {
		if !c.ok {
			continue
		}
		src := filepath.Join(c.dir, "scdl")
		a, err := Open(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []string{ModeCells, ModeArchive} {
			out := filepath.Join(t.TempDir(), "back")
			if err := os.Mkdir(out, 0o755); err != nil {
				t.Fatal(err)
			}
			newSource := func(bool) (dataset.PayloadSource, error) {
				return NewSource(a, SourceOptions{Mode: mode, BatchCells: 2, ChunkCells: 5})
			}
			st, err := WriteRows(context.Background(), newSource, out, RowsOptions{Overwrite: true, Workers: 2})
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, mode, err)
			}
			if st.Output != out || st.Mode != mode || st.Cells != a.NumRows() || st.NNZ != a.NNZ() || st.Fresh {
				t.Errorf("%s %s: %+v", c.name, mode, st)
			}
			if want, got := treeOf(t, src), treeOf(t, out); len(got) != len(want) {
				t.Errorf("%s %s: %d files, want %d", c.name, mode, len(got), len(want))
			} else {
				for name, b := range want {
					if !bytes.Equal(got[name], b) {
						t.Errorf("%s %s: %s differs", c.name, mode, name)
					}
				}
			}
			if _, err := WriteRows(context.Background(), newSource, out, RowsOptions{}); err == nil {
				t.Errorf("%s %s: an existing directory replaced without Overwrite", c.name, mode)
			}
		}
		a.Close()
		n++
	}
	if n == 0 {
		t.Fatal("no archive to read")
	}
}

// treeOf reads every file under dir by its slash-separated path.
func treeOf(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}
