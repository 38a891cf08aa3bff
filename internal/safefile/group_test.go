package safefile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestGroupCommit: files committed in a group, from several goroutines,
// stay under their temporary names (the old files in place) until the
// group's Commit, which puts every one in place with its bytes, replacing
// or not as asked; nothing else is left in the directories.
func TestGroupCommit(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	os.WriteFile(filepath.Join(dirs[0], "f000"), []byte("old"), 0o644)
	var g Group
	var wg sync.WaitGroup
	const n = 200
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := Create(filepath.Join(dirs[i%2], fmt.Sprintf("f%03d", i)))
			if err == nil {
				_, err = fmt.Fprintf(f, "file %d", i)
			}
			if err == nil {
				err = f.CommitIn(&g, true)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dirs[0], "f000")); string(b) != "old" {
		t.Fatalf("before Commit, f000 holds %q", b)
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		b, err := os.ReadFile(filepath.Join(dirs[i%2], fmt.Sprintf("f%03d", i)))
		if err != nil || string(b) != fmt.Sprintf("file %d", i) {
			t.Fatalf("file %d: %q, %v", i, b, err)
		}
	}
	for _, d := range dirs {
		if got := names(t, d); len(got) != n/2 {
			t.Errorf("%s holds %d entries, want %d", d, len(got), n/2)
		}
	}
	f, _ := Create(filepath.Join(dirs[0], "late"))
	if err := f.CommitIn(&g, true); err == nil {
		t.Error("a file committed in a group committed already was taken")
	}
	if got := names(t, dirs[0]); slices.Contains(got, "late") || len(got) != n/2 {
		t.Errorf("the late file was left: %v", got)
	}
}

// TestGroupAbortAndExisting: Abort removes the files waiting in a group,
// leaving the old ones; a Commit meeting a target that exists where
// replacing was not asked fails with ErrExists, naming it, leaves that
// file as it is, and removes the files not yet in place.
func TestGroupAbortAndExisting(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "b"), []byte("theirs"), 0o644)
	write := func(g *Group, name string, replace bool) {
		f, err := Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("ours")
		if err := f.CommitIn(g, replace); err != nil {
			t.Fatal(err)
		}
	}
	var aborted Group
	write(&aborted, "a", true)
	write(&aborted, "b", true)
	aborted.Abort()
	if got := names(t, dir); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("after Abort: %v", got)
	}

	var g Group
	write(&g, "a", false)
	write(&g, "b", false)
	write(&g, "c", false)
	err := g.Commit()
	if !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), filepath.Join(dir, "b")) {
		t.Fatalf("Commit = %v, want ErrExists naming b", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b")); string(b) != "theirs" {
		t.Errorf("b holds %q", b)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("after the failed Commit: %v, want a (in place before b) and b", got)
	}
}

// TestCommitReplaceIn: a file whose context carries a group waits for the
// group; without one it is committed at once.
func TestCommitReplaceIn(t *testing.T) {
	dir := t.TempDir()
	var g Group
	ctx := WithGroup(context.Background(), &g)
	for _, c := range []struct {
		ctx  context.Context
		name string
	}{{ctx, "grouped"}, {context.Background(), "alone"}} {
		f, err := Create(filepath.Join(dir, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.CommitReplaceIn(c.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "grouped")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the grouped file is in place before its group's Commit: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "alone")); err != nil {
		t.Error(err)
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"alone", "grouped"}) {
		t.Errorf("%v", got)
	}
}

// TestGroupBatches: a group holding groupBatch files commits them at the
// CommitIn that reaches the count, and goes on taking files; Commit puts
// the rest in place. Its memory is a batch's, whatever the number of files.
func TestGroupBatches(t *testing.T) {
	defer func(n int) { groupBatch = n }(groupBatch)
	groupBatch = 5
	dir := t.TempDir()
	var g Group
	for i := range 12 {
		f, err := Create(filepath.Join(dir, fmt.Sprintf("f%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.CommitIn(&g, true); err != nil {
			t.Fatal(err)
		}
		placed := 0
		for _, n := range names(t, dir) {
			if !strings.HasPrefix(n, TempPrefix) {
				placed++
			}
		}
		if want := (i + 1) / 5 * 5; placed != want {
			t.Fatalf("after %d files, %d in place, want %d", i+1, placed, want)
		}
	}
	if err := g.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := names(t, dir); len(got) != 12 || got[11] != "f11" {
		t.Fatalf("%v", got)
	}
}
