package scdl

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
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

// TestFreshHugeNGenes: one cell whose .json claims n_genes 2^31-2 (or a
// gene index as large) is refused, naming the source, not met by
// allocating a name for each gene.
func TestFreshHugeNGenes(t *testing.T) {
	noSync(t)
	for _, c := range []struct {
		json  string
		genes []uint64
	}{
		{`{"row": 0, "n_genes": 2147483646}`, []uint64{1}},
		{`{"row": 0}`, []uint64{2147483000}},
	} {
		rows := freshCells(3)
		key := CellKey(0)
		for i := range rows {
			switch rows[i].name {
			case key + ".json":
				rows[i].data = []byte(c.json)
			case key + ".genes.npy":
				rows[i].data = npyGenes("<i8", c.genes)
			case key + ".values.npy":
				rows[i].data = binary.LittleEndian.AppendUint32(appendNPYHeader(nil, "<f4", 1), math.Float32bits(1))
			}
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		src := &memSource{name: "huge", shards: [][]memRow{rows}}
		_, err := WriteRows(context.Background(), func(bool) (dataset.PayloadSource, error) { return src, nil },
			filepath.Join(t.TempDir(), "out"), RowsOptions{})
		runtime.ReadMemStats(&after)
		if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), "huge") {
			t.Errorf("%s: %v", c.json, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 256<<20 {
			t.Errorf("%s: allocated %d MiB", c.json, grew>>20)
		}
	}
}
