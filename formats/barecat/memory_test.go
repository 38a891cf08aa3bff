package barecat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// writeMany writes files of a few directories, with a hard link, and
// returns the Writer's error (Close's included).
func writeMany(t *testing.T, out string, memory int64, extra func(w *Writer) error) (*Writer, error) {
	t.Helper()
	w, err := Create(out, WriterOptions{Memory: memory, ShardSizeLimit: 50000})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.AddDir(Dir{Path: "d1", Mode: 0o700, HasMode: true}); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		body := bytes.Repeat([]byte{byte(i)}, i%97)
		if err := w.Add(File{Path: fmt.Sprintf("d%d/e%d/f%05d", i%3, i%7, i), Size: int64(len(body))}, bytes.NewReader(body)); err != nil {
			w.Abort()
			return w, err
		}
	}
	if _, err := w.AddLink(File{Path: "link"}, "d1/e1/f00001"); err != nil {
		w.Abort()
		return w, err
	}
	if extra != nil {
		if err := extra(w); err != nil {
			w.Abort()
			return w, err
		}
	}
	return w, w.Close()
}

// With a memory budget too small for the filter of paths, the Writer keeps
// no more of it than the budget allows (memory flat in the number of
// files) and writes the same archive; a repeated path and a path both a
// file and a directory are still refused, found by SQLite as the rows go
// in and by Close.
func TestWriterMemoryBudget(t *testing.T) {
	dir := t.TempDir()
	want := filepath.Join(dir, "want.barecat")
	if _, err := writeMany(t, want, 0, nil); err != nil {
		t.Fatal(err)
	}
	got := filepath.Join(dir, "got.barecat")
	w, err := writeMany(t, got, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !w.unfiltered || w.paths.Len() > w.maxFiltered || w.maxFiltered != 1 {
		t.Fatalf("filter kept %d paths (at most %d), dropped %v", w.paths.Len(), w.maxFiltered, w.unfiltered)
	}
	// The index's keys went to sorted runs in a temporary file, now
	// gone; the link found its target in the log's runs on disk.
	if w.keysFile == nil || w.log.f != nil {
		t.Fatalf("keys spilled to %v; log's file %v", w.keysFile, w.log.f)
	}
	sameArchive(t, want, got, false)

	// A repeated path: refused, naming it, by a later call or Close.
	_, err = writeMany(t, filepath.Join(dir, "dup.barecat"), 1, func(w *Writer) error {
		return w.Add(File{Path: "d2/e3/f00017", Size: 1}, strings.NewReader("x"))
	})
	var e *Error
	if !errors.Is(err, ErrDuplicate) || !errors.As(err, &e) || e.Name != "d2/e3/f00017" {
		t.Fatalf("repeated path: %v", err)
	}
	// Repeated within one batch of rows.
	_, err = writeMany(t, filepath.Join(dir, "dup2.barecat"), 1, func(w *Writer) error {
		for _, p := range []string{"z/a", "z/b", "z/a"} {
			if err := w.Add(File{Path: p}, nil); err != nil {
				return err
			}
		}
		return nil
	})
	if !errors.Is(err, ErrDuplicate) || !errors.As(err, &e) || e.Name != "z/a" {
		t.Fatalf("path repeated in a batch: %v", err)
	}
	// A file that is also a directory of files after it.
	_, err = writeMany(t, filepath.Join(dir, "conflict.barecat"), 1, func(w *Writer) error {
		if err := w.Add(File{Path: "x/y"}, nil); err != nil {
			return err
		}
		return w.Add(File{Path: "x/y/z"}, nil)
	})
	if !errors.Is(err, ErrConflict) || !errors.As(err, &e) || e.Name != "x/y" {
		t.Fatalf("file and directory: %v", err)
	}
	all, _ := filepath.Glob(filepath.Join(dir, "*"))
	for _, p := range all {
		if b := filepath.Base(p); !strings.HasPrefix(b, "want.") && !strings.HasPrefix(b, "got.") {
			t.Errorf("left behind by a failed write: %s", b)
		}
	}
}

// WriteRows and MergeParts under a memory budget too small for the
// filter: a repeated path, found by SQLite after later rows or by Close,
// is an ErrDuplicatePath naming it.
func TestWriteRowsMemoryBudgetRepeat(t *testing.T) {
	for _, last := range []bool{false, true} {
		var rows []dataset.Row
		for i := range 400 {
			rows = append(rows, fileRow(fmt.Sprintf("r/%04d", i), "ab", 1))
		}
		rows = append(rows, fileRow("r/0003", "c", 1))
		if !last {
			for i := range 400 {
				rows = append(rows, fileRow(fmt.Sprintf("s/%04d", i), "d", 1))
			}
		}
		mk := func() dataset.PayloadSource { return newMemSource(t, [][]dataset.Row{rows[:200], rows[200:]}) }
		out := filepath.Join(t.TempDir(), "o.barecat")
		_, err := WriteRows(context.Background(), mk(), out, RowsOptions{Memory: 1})
		if !errors.Is(err, ErrDuplicatePath) || !strings.Contains(err.Error(), "r/0003") {
			t.Fatalf("WriteRows, repeat last %v: %v", last, err)
		}
		_, _, _, err = runParts(t, mk, []int{0, 1, 2}, filepath.Join(t.TempDir(), "m.barecat"), RowsOptions{Memory: 1})
		if !errors.Is(err, ErrDuplicatePath) || !strings.Contains(err.Error(), "r/0003") {
			t.Fatalf("MergeParts, repeat last %v: %v", last, err)
		}
	}
}
