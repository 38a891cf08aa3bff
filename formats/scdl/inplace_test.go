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
// refuse the dataset. Where the dataset carries its header, every part is
// written in place and the merge copies no byte: the archive's data.npy
// and col_ptr.npy are the run's files, and their run names are gone.
func TestWriteRangeMergesInPlace(t *testing.T) {
	ctx := context.Background()
	for _, ds := range partDatasets(t) {
		t.Run(ds.name, func(t *testing.T) {
			single := filepath.Join(t.TempDir(), "single")
			want, wantErr := WriteRows(ctx, func(bool) (dataset.PayloadSource, error) { return ds.newSource() }, single, RowsOptions{Workers: 2})
			if (wantErr == nil) != (ds.err == nil) {
				t.Fatalf("WriteRows: %v, want %v", wantErr, ds.err)
			}
			src, err := ds.newSource()
			if err != nil {
				t.Fatal(err)
			}
			for _, bounds := range splits(src.NumShards()) {
				name := strings.Trim(strings.ReplaceAll(fmt.Sprint(bounds), " ", "-"), "[]")
				t.Run(name, func(t *testing.T) {
					root := t.TempDir()
					out := filepath.Join(root, "merged")
					dirs, pst, err := writeRanges(t, ds.newSource, bounds, root)
					var got *RowsStats
					var ms *MergeStats
					if err == nil {
						got, ms, err = MergeParts(ctx, dirs, out, RowsOptions{})
					}
					if wantErr != nil {
						if err == nil {
							t.Fatalf("the parts merged; WriteRows said %v", wantErr)
						}
						if ds.err != errAny && !errors.Is(err, ds.err) {
							t.Errorf("%v, want %v (WriteRows: %v)", err, ds.err, wantErr)
						}
						if _, serr := os.Stat(out); serr == nil {
							t.Errorf("an output after an error")
						}
						return
					}
					if err != nil {
						t.Fatal(err)
					}
					wantSt := *want
					wantSt.Output = out
					if *got != wantSt {
						t.Errorf("stats %+v, want %+v", got, wantSt)
					}
					sameTree(t, single, out)
					placed := want.Mode == ModeCells && !want.Fresh
					for _, st := range pst {
						if st.InPlace != placed {
							t.Errorf("part %s: in place %v, want %v", st.Dir, st.InPlace, placed)
						}
					}
					if !placed {
						return
					}
					if ms.CopiedBytes != 0 || ms.LinkedFiles < 2 {
						t.Errorf("merge stats %+v: want no byte copied, the arrays linked", *ms)
					}
					for _, f := range []struct{ out, part string }{{DataFile, partDataFile}, {ColPtrFile, partColFile}} {
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
		})
	}
}
