package scdl

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// TestVerifyCanceled: Verify and Inspect stop with the context's error
// when it is canceled, rather than reading the whole archive.
func TestVerifyCanceled(t *testing.T) {
	noSync(t)
	dir := filepath.Join(t.TempDir(), "a.scdl")
	writeSynth(t, dir, synthRows(300, 5, []int{300}, []int{40}), []int{300}, []int{40}, WriterOptions{})
	if _, err := Verify(context.Background(), dir); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, err := Verify(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Verify with a canceled context: %v, %v", rep, err)
	}
	if rep, err := Inspect(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Inspect with a canceled context: %v, %v", rep, err)
	}
	if a, err := OpenContext(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenContext with a canceled context: %v, %v", a, err)
	}
}

// TestOverwriteOnlyAnArchive: Overwrite (--force) replaces an SCDL
// archive, and refuses a directory holding anything else (.git, notes),
// which survives whole, or a file.
func TestOverwriteOnlyAnArchive(t *testing.T) {
	noSync(t)
	src := filepath.Join(t.TempDir(), "src")
	writeSynth(t, src, synthRows(20, 3, []int{20}, []int{10}), []int{20}, []int{10}, WriterOptions{})
	a, err := Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	newSource := func(bool) (dataset.PayloadSource, error) { return NewSource(a, SourceOptions{Mode: ModeCells}) }
	root := t.TempDir()

	notes := filepath.Join(root, "notes")
	os.MkdirAll(filepath.Join(notes, ".git", "objects"), 0o755)
	os.WriteFile(filepath.Join(notes, "notes.txt"), []byte("mine"), 0o644)
	os.WriteFile(filepath.Join(notes, HeaderFile), []byte("not a header"), 0o644)
	file := filepath.Join(root, "file")
	os.WriteFile(file, []byte("mine"), 0o644)
	for _, dst := range []string{notes, file} {
		_, err := WriteRows(context.Background(), newSource, dst, RowsOptions{Overwrite: true})
		if !errors.Is(err, ErrNotArchive) || !strings.Contains(err.Error(), dst) {
			t.Errorf("Overwrite of %s: %v", dst, err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(notes, "notes.txt")); string(b) != "mine" || err != nil {
		t.Errorf("notes.txt: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(notes, ".git", "objects")); err != nil {
		t.Errorf(".git: %v", err)
	}
	if b, err := os.ReadFile(file); string(b) != "mine" || err != nil {
		t.Errorf("file: %q, %v", b, err)
	}

	// An archive with a file no archive has is refused too; without it,
	// replaced.
	arch := filepath.Join(root, "arch")
	copyDir(t, src, arch)
	os.WriteFile(filepath.Join(arch, "notes.txt"), []byte("mine"), 0o644)
	if _, err := WriteRows(context.Background(), newSource, arch, RowsOptions{Overwrite: true}); !errors.Is(err, ErrNotArchive) || !strings.Contains(err.Error(), `"notes.txt"`) {
		t.Errorf("Overwrite of an archive holding notes.txt: %v", err)
	}
	os.Remove(filepath.Join(arch, "notes.txt"))
	if _, err := WriteRows(context.Background(), newSource, arch, RowsOptions{Overwrite: true}); err != nil {
		t.Errorf("Overwrite of an archive: %v", err)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 3 {
		t.Errorf("%d entries in %s, want notes, file and arch", len(ents), root)
	}
}
