package scdl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// writeRanges writes one part per task of the split with WriteRange, the
// run's files in root/run.
func writeRanges(t testing.TB, newSource func() (dataset.PayloadSource, error), bounds []int, root string) ([]string, []*PartStats, error) {
	run := filepath.Join(root, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	var dirs []string
	var stats []*PartStats
	for k := range len(bounds) - 1 {
		dir := filepath.Join(root, fmt.Sprintf("part%03d", k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		st, err := WriteRange(context.Background(), func(bool) (dataset.PayloadSource, error) { return newSource() },
			bounds[k], bounds[k+1], dir, run, RowsOptions{Workers: k%3 + 1})
		if err != nil {
			return dirs, stats, err
		}
		dirs, stats = append(dirs, dir), append(stats, st)
	}
	return dirs, stats, nil
}

// TestWriteRangeMergesInPlace: for every dataset and split, parts written
// by WriteRange merge into what WriteRows writes, byte for byte, or both
// refuse the dataset. Every part is written in place. Where the dataset
// carries its header, the merge copies no byte: the archive's data.npy
// and col_ptr.npy are the run's files; in a fresh archive data.npy is,
// and only gene indices are copied. The run's names of its files are gone.
func TestWriteRangeMergesInPlace(t *testing.T) {
	mergeEverySplit(t, writeRanges, func(t *testing.T, _ partDataset, want *RowsStats, _ []int, root string, dirs []string, pst []*PartStats, ms *MergeStats) {
		out := filepath.Join(root, "merged")
		for _, st := range pst {
			if !st.InPlace {
				t.Errorf("part %s: not written in place", st.Dir)
			}
		}
		if want.Mode != ModeCells {
			return
		}
		arrays := []struct{ out, part string }{{DataFile, partDataFile}, {ColPtrFile, partColFile}}
		if want.Fresh {
			// The values alone are placed; the gene indices
			// are copied (or converted), and only they.
			arrays = arrays[:1]
			if st, err := os.Stat(filepath.Join(out, ColPtrFile)); err != nil || ms.CopiedBytes > st.Size() || ms.LinkedFiles < 1 {
				t.Errorf("merge stats %+v: want at most col_ptr.npy copied, data.npy linked", *ms)
			}
		} else if ms.CopiedBytes != 0 || ms.LinkedFiles < 2 {
			t.Errorf("merge stats %+v: want no byte copied, the arrays linked", *ms)
		}
		for _, f := range arrays {
			a, err := os.Stat(filepath.Join(out, f.out))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.Stat(filepath.Join(dirs[0], f.part))
			if err != nil {
				t.Fatal(err)
			}
			if !os.SameFile(a, b) {
				t.Errorf("%s is not the run's file", f.out)
			}
		}
		if left, _ := os.ReadDir(filepath.Join(root, "run")); len(left) != 0 {
			t.Errorf("the run's files are still named: %v", left)
		}
	})
}

// placedDataset is a dataset with its header whose cells straddle shards.
func placedDataset(t *testing.T) partDataset { return namedDataset(t, "straddling") }

func namedDataset(t *testing.T, name string) partDataset {
	for _, ds := range partDatasets(t) {
		if ds.name == name {
			return ds
		}
	}
	t.Fatalf("no dataset %s", name)
	return partDataset{}
}

// TestMergeInPlaceGathered: a part whose files are its own (gathered from
// another machine: a copy, not a link to the run's files) has its share
// copied into the archive's arrays, and the archive is still WriteRows'.
func TestMergeInPlaceGathered(t *testing.T) {
	t.Run("header", func(t *testing.T) { testMergeInPlaceGathered(t, placedDataset(t)) })
	t.Run("fresh", func(t *testing.T) { testMergeInPlaceGathered(t, namedDataset(t, "fresh-mixed-dtypes")) })
}

func testMergeInPlaceGathered(t *testing.T, ds partDataset) {
	ctx := context.Background()
	single := filepath.Join(t.TempDir(), "single")
	if _, err := WriteRows(ctx, func(bool) (dataset.PayloadSource, error) { return ds.newSource() }, single, RowsOptions{}); err != nil {
		t.Fatal(err)
	}
	src, _ := ds.newSource()
	n := src.NumShards()
	root := t.TempDir()
	dirs, pst, err := writeRanges(t, ds.newSource, []int{0, n / 3, 2 * n / 3, n}, root)
	if err != nil {
		t.Fatal(err)
	}
	m, err := loadPart(dirs[1])
	if err != nil {
		t.Fatal(err)
	}
	pl := m.meta.place
	var want int64
	for _, name := range []string{partDataFile, partColFile} {
		if name == partColFile && pl.valuesOnly() {
			continue // the part's own already
		}
		p := filepath.Join(dirs[1], name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want = int64(pst[1].NNZ) * int64(pl.dataDT.ItemSize()+pl.colDT.ItemSize())
	if want == 0 {
		t.Fatal("the middle part has no whole cells")
	}
	out := filepath.Join(root, "merged")
	_, ms, err := MergeParts(ctx, dirs, out, RowsOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sameTree(t, single, out)
	if pl.valuesOnly() {
		// Its values, and every part's gene indices (or converted).
		st, _ := os.Stat(filepath.Join(out, ColPtrFile))
		if ms.CopiedBytes < want || ms.CopiedBytes > want+st.Size() {
			t.Errorf("copied %d bytes, want the middle part's %d values' and gene indices", ms.CopiedBytes, want)
		}
	} else if ms.CopiedBytes != want {
		t.Errorf("copied %d bytes, want the middle part's %d", ms.CopiedBytes, want)
	}
}

// TestMergeInPlaceRefuses: parts of both kinds, and a part whose cells
// were placed where the parts before it do not end.
func TestMergeInPlaceRefuses(t *testing.T) {
	ds := placedDataset(t)
	ctx := context.Background()
	src, _ := ds.newSource()
	n := src.NumShards()
	bounds := []int{0, n / 3, 2 * n / 3, n}

	root := t.TempDir()
	placed, _, err := writeRanges(t, ds.newSource, bounds, filepath.Join(root, "placed"))
	if err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(root, "plain"), 0o755)
	plain, _, err := writeParts(t, ds.newSource, bounds, filepath.Join(root, "plain"))
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(root, "merged")
	_, _, err = MergeParts(ctx, []string{placed[0], plain[1], placed[2]}, out, RowsOptions{})
	if !errors.Is(err, errMixedParts) || !errors.Is(err, ErrPart) {
		t.Errorf("parts of both kinds: %v", err)
	}

	// The middle part says its cells start one value later.
	mp := filepath.Join(placed[1], PartMetaFile)
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodePartMeta(b)
	if err != nil {
		t.Fatal(err)
	}
	m.place.first++
	if err := os.WriteFile(mp, m.encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = MergeParts(ctx, placed, out, RowsOptions{})
	if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), placed[1]) || !strings.Contains(err.Error(), "did not see the same dataset") {
		t.Errorf("misplaced cells: %v", err)
	}
	if _, serr := os.Stat(out); serr == nil {
		t.Errorf("an output after an error")
	}
}

// TestWriteRangeCanceled: a task canceled leaves its part directory
// empty, in either pass.
func TestWriteRangeCanceled(t *testing.T) {
	ds := placedDataset(t)
	src, _ := ds.newSource()
	n := src.NumShards()
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "run"), 0o755)
	for _, lo := range []int{0, n / 2} {
		dir := filepath.Join(root, fmt.Sprint("part", lo))
		os.Mkdir(dir, 0o755)
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		_, err := WriteRange(ctx, func(bool) (dataset.PayloadSource, error) {
			// Canceled as the writing pass starts (the second call, or
			// the third where the header is looked for past the first).
			if calls++; calls == 2 && lo > 0 || calls == 3 {
				cancel()
			}
			return ds.newSource()
		}, lo, n, dir, filepath.Join(root, "run"), RowsOptions{})
		cancel()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("lo %d: %v, want context.Canceled", lo, err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("lo %d: the part holds %v", lo, left)
		}
	}
}
