package barecat

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// TestVerifyHugePath: one huge path (16 MiB, escaping the tree) is
// reported by its row and length, never read, and a long one (300 kB, not
// normalized) with its name cut and its length given; the memory Verify
// and its messages take does not grow with the huge one, and a long name
// in a short directory still counts in it.
func TestVerifyHugePath(t *testing.T) {
	const n, m = 16 << 20, 300000
	dir := copyDir(t, confDir(t, "basic"))
	index := filepath.Join(dir, "basic.barecat")
	// One path past maxPathBytes, reported by its row, never read; one
	// below it, read, and named cut.
	execSQL(t, index, fmt.Sprintf("UPDATE files SET path = '../' || replace(hex(zeroblob(%d)), '0', 'a') || '/f' WHERE path = 'a.txt'", n/2),
		fmt.Sprintf("UPDATE files SET path = 'dir1//' || replace(hex(zeroblob(%d)), '0', 'b') WHERE path = 'dir1/b.bin'", m/2),
		// A long name in a short directory: still counted in it.
		fmt.Sprintf("UPDATE files SET path = 'dir1/sub/' || replace(hex(zeroblob(%d)), '0', 'c') WHERE path = 'dir1/sub/c.bin'", maxPathBytes))
	a := mustOpen(t, index)
	// Directories checked in memory, and by the sorted walk.
	for _, treeDirs := range []int{maxTreeDirs, 1} {
		old := maxTreeDirs
		maxTreeDirs = treeDirs
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		rep, err := a.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var msgs []string // as verify prints them
		for _, p := range rep.Problems {
			msgs = append(msgs, p.Error())
		}
		runtime.ReadMemStats(&after)
		maxTreeDirs = old
		if grew := after.TotalAlloc - before.TotalAlloc; grew > n/2 {
			t.Errorf("Verify and its messages allocated %d MiB for a %d MiB path", grew>>20, n>>20)
		}
		long, cut := false, false
		for i, msg := range msgs {
			if errors.Is(rep.Problems[i], ErrStats) {
				t.Errorf("a long name counted wrong: %s", msg)
			}
			if len(msg) > 2048 {
				t.Errorf("a message of %d bytes: %.200s...", len(msg), msg)
			}
			long = long || strings.Contains(msg, fmt.Sprintf("a path of %d bytes", n+5))
			cut = cut || strings.Contains(msg, fmt.Sprintf(`bbbb"... (%d bytes)`, m+6))
		}
		if !long || !cut {
			t.Errorf("no message gives the paths' lengths %d and %d: %.300q", n+5, m+6, msgs)
		}
	}
}

// TestOpenFIFO: an index that is a FIFO is refused at once, not opened
// (which would wait for a writer for ever).
func TestOpenFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.barecat")
	mkfifo(t, p)
	done := make(chan error, 1)
	go func() {
		_, err := Open(p)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, pathguard.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("Open of a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Open of a FIFO blocks")
	}
}

// TestOverwriteOnlyAnArchive: Overwrite (--force) replaces a Barecat
// archive, never a file of the index's name that is no index, nor a
// directory where a shard would go: both survive, refused with
// ErrNotArchive naming them.
func TestOverwriteOnlyAnArchive(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.barecat")
	os.WriteFile(out, []byte("my notes"), 0o644)
	if _, err := Create(out, WriterOptions{Overwrite: true}); !errors.Is(err, ErrNotArchive) || !strings.Contains(err.Error(), out) {
		t.Errorf("Overwrite of a notes file: %v", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "my notes" {
		t.Errorf("the notes file holds %q", b)
	}
	// A real archive, then a directory where its second shard would go.
	os.Remove(out)
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w.Add(File{Path: "a", Size: 1}, strings.NewReader("a"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	keep := ShardPath(out, 1)
	os.MkdirAll(filepath.Join(keep, ".git"), 0o755)
	if _, err := Create(out, WriterOptions{Overwrite: true}); !errors.Is(err, ErrNotArchive) || !strings.Contains(err.Error(), keep) {
		t.Errorf("Overwrite with a directory as a shard: %v", err)
	}
	if _, err := os.Stat(filepath.Join(keep, ".git")); err != nil {
		t.Errorf("the directory went: %v", err)
	}
	os.RemoveAll(keep)
	w, err = Create(out, WriterOptions{Overwrite: true})
	if err != nil {
		t.Fatalf("Overwrite of an archive: %v", err)
	}
	w.Add(File{Path: "b", Size: 1}, strings.NewReader("b"))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestWriterCanceled: a Writer made by CreateContext stops when its
// context is canceled: Add and Close fail with the context's error, and
// nothing is left in the directory.
func TestWriterCanceled(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := CreateContext(ctx, filepath.Join(dir, "c.barecat"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(File{Path: "a", Size: 1}, strings.NewReader("a")); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := w.Add(File{Path: "b", Size: 1}, strings.NewReader("b")); !errors.Is(err, context.Canceled) {
		t.Errorf("Add after cancel: %v", err)
	}
	if err := w.Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close after cancel: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
