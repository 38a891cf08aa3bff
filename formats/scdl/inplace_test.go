package scdl

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// writeRanges writes one part per task of the split with WriteRange, the
// run's files in root/run, the tasks one after the other: each finds the
// records of those before it, and counts nothing.
func writeRanges(t testing.TB, newSource func() (dataset.PayloadSource, error), bounds []int, root string) ([]string, []*PartStats, error) {
	return writeRangesOrdered(t, newSource, bounds, root, false)
}

// writeRangesLastFirst is writeRanges with the tasks run from the last:
// no task finds a record of the shards before its own, each counts them.
func writeRangesLastFirst(t testing.TB, newSource func() (dataset.PayloadSource, error), bounds []int, root string) ([]string, []*PartStats, error) {
	return writeRangesOrdered(t, newSource, bounds, root, true)
}

func writeRangesOrdered(t testing.TB, newSource func() (dataset.PayloadSource, error), bounds []int, root string, lastFirst bool) ([]string, []*PartStats, error) {
	run := filepath.Join(root, "run")
	if err := os.MkdirAll(run, 0o755); err != nil {
		t.Fatal(err)
	}
	n := len(bounds) - 1
	dirs, stats := make([]string, n), make([]*PartStats, n)
	for i := range n {
		k := i
		if lastFirst {
			k = n - 1 - i
		}
		dir := filepath.Join(root, fmt.Sprintf("part%03d", k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		st, err := WriteRange(context.Background(), func(bool) (dataset.PayloadSource, error) { return newSource() },
			bounds[k], bounds[k+1], dir, run, RowsOptions{Workers: k%3 + 1})
		if err != nil {
			return nil, nil, err
		}
		dirs[k], stats[k] = dir, st
	}
	return dirs, stats, nil
}

// TestWriteRangeMergesInPlace: for every dataset and split, parts written
// by WriteRange merge into what WriteRows writes, byte for byte, or both
// refuse the dataset. Every part is written in place. Where the dataset
// carries its header, the merge copies no byte: the archive's data.npy
// and col_ptr.npy are the run's files; in a fresh archive data.npy is,
// and only gene indices are copied. The run's names of its files are gone.
// The tasks run in order (each reads the values before its shards from
// the records of those before it) and from the last (each counts them).
func TestWriteRangeMergesInPlace(t *testing.T) {
	t.Run("in order", func(t *testing.T) { mergeEverySplit(t, writeRanges, checkMergedInPlace) })
	t.Run("last first", func(t *testing.T) { mergeEverySplit(t, writeRangesLastFirst, checkMergedInPlace) })
}

func checkMergedInPlace(t *testing.T, _ partDataset, want *RowsStats, _ []int, root string, dirs []string, pst []*PartStats, ms *MergeStats) {
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

// TestWriteRangeRecords: tasks run one after the other count nothing (the
// only records are each task's own shards'); tasks run from the last
// count the shards before their own and record them. A record damaged,
// or records that disagree, are counted again; a record that lies is
// found by the merge.
func TestWriteRangeRecords(t *testing.T) {
	ds := placedDataset(t)
	ctx := context.Background()
	src, _ := ds.newSource()
	n := src.NumShards()
	bounds := []int{0, n / 3, 2 * n / 3, n}
	single := filepath.Join(t.TempDir(), "single")
	if _, err := WriteRows(ctx, func(bool) (dataset.PayloadSource, error) { return ds.newSource() }, single, RowsOptions{}); err != nil {
		t.Fatal(err)
	}
	// recorded lists the value records of the run's directory, by range.
	recorded := func(run string) []string {
		var got []string
		ents, _ := os.ReadDir(run)
		for _, e := range ents {
			if _, rest, ok := strings.Cut(e.Name(), "."+valuesRecord); ok {
				got = append(got, rest)
			}
		}
		slices.Sort(got)
		return got
	}
	ranges := func(pairs ...int) []string {
		var s []string
		for i := 0; i < len(pairs); i += 2 {
			s = append(s, fmt.Sprintf("%d-%d", pairs[i], pairs[i+1]))
		}
		slices.Sort(s)
		return s
	}
	merge := func(t *testing.T, dirs []string) error {
		out := filepath.Join(filepath.Dir(dirs[0]), "merged")
		if _, _, err := MergeParts(ctx, dirs, out, RowsOptions{}); err != nil {
			return err
		}
		sameTree(t, single, out)
		return nil
	}
	b1, b2 := bounds[1], bounds[2]

	t.Run("in order", func(t *testing.T) {
		root := t.TempDir()
		dirs, _, err := writeRanges(t, ds.newSource, bounds, root)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := recorded(filepath.Join(root, "run")), ranges(0, b1, b1, b2, b2, n); !slices.Equal(got, want) {
			t.Errorf("records %v, want %v (each task's own shards alone)", got, want)
		}
		if err := merge(t, dirs); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("last first", func(t *testing.T) {
		root := t.TempDir()
		dirs, _, err := writeRangesLastFirst(t, ds.newSource, bounds, root)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := recorded(filepath.Join(root, "run")), ranges(0, b2, 0, b1, b1, b2, b2, n); !slices.Equal(got, want) {
			t.Errorf("records %v, want %v (the shards before each task's, and its own)", got, want)
		}
		if err := merge(t, dirs); err != nil {
			t.Fatal(err)
		}
	})

	// The first two tasks' records, then the third task alone over them.
	third := func(t *testing.T, spoil func(r *records)) ([]string, error) {
		root := t.TempDir()
		dirs, _, err := writeRanges(t, ds.newSource, bounds[:3], root)
		if err != nil {
			t.Fatal(err)
		}
		run := filepath.Join(root, "run")
		c := &countSink{}
		c.shards, c.sizes = make([]string, n), dataset.ShardSizes(src)
		for i := range c.shards {
			c.shards[i] = src.ShardName(i)
		}
		spoil(openRecords(run, c.datasetKey()))
		dir := filepath.Join(root, "part002")
		os.Mkdir(dir, 0o755)
		if _, err := WriteRange(ctx, func(bool) (dataset.PayloadSource, error) { return ds.newSource() }, b2, n, dir, run, RowsOptions{}); err != nil {
			return nil, err
		}
		return append(dirs, dir), nil
	}
	t.Run("damaged", func(t *testing.T) {
		dirs, err := third(t, func(r *records) {
			name := filepath.Join(r.dir, r.valuesName(b1, b2))
			b, _ := os.ReadFile(name)
			b[0]++
			os.WriteFile(name, b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := merge(t, dirs); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("disagree", func(t *testing.T) {
		dirs, err := third(t, func(r *records) { r.putValues(0, b2, 1) })
		if err != nil {
			t.Fatal(err)
		}
		if err := merge(t, dirs); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("lies", func(t *testing.T) {
		dirs, err := third(t, func(r *records) {
			_, before := r.chain(b1)
			if from, v := r.chain(b2); from != b2 {
				t.Fatalf("the records reach shard %d, want %d", from, b2)
			} else {
				r.putValues(b1, b2, v-before-1)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		err = merge(t, dirs)
		if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), "did not see the same dataset") {
			t.Errorf("a record one value off: %v", err)
		}
	})
}
