package scdl

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// partBenchCells is the size of the archive BenchmarkWriteRows and
// BenchmarkMerge4 convert: 50k cells of 50 to 150 float32 values (5M
// values: data.npy 20 MB, col_ptr.npy 10 MB), read in shards of 4096 cells.
const (
	partBenchCells = 50_000
	partBenchChunk = 4096
)

// partBenchSource writes the archive in dir and returns its cells-mode
// source maker and the archive's size in bytes.
func partBenchSource(b *testing.B, dir string) (func() (dataset.PayloadSource, error), int64) {
	b.Helper()
	writeBenchArchive(b, dir, partBenchCells)
	a, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	var size int64
	for _, f := range a.Files() {
		st, _ := os.Stat(filepath.Join(dir, filepath.FromSlash(f)))
		size += st.Size()
	}
	return func() (dataset.PayloadSource, error) {
		return NewSource(a, SourceOptions{ChunkCells: partBenchChunk})
	}, size
}

// BenchmarkWriteRows converts the archive, as rows, back into an archive
// in one run: what a partitioned run's merge is measured against.
func BenchmarkWriteRows(b *testing.B) {
	newSource, size := partBenchSource(b, filepath.Join(b.TempDir(), "in"))
	b.SetBytes(size)
	b.ResetTimer()
	for i := range b.N {
		out := filepath.Join(b.TempDir(), fmt.Sprint("out", i))
		if _, err := WriteRows(context.Background(), func(bool) (dataset.PayloadSource, error) { return newSource() }, out, RowsOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMerge4 merges 4 parts of the same archive (written before the
// timer starts, as 4 tasks would), reporting the bytes it copied by range
// or linked and those it wrote itself (row_ptr.npy, the cells at the
// parts' edges) per merge.
func BenchmarkMerge4(b *testing.B) {
	root := b.TempDir()
	newSource, size := partBenchSource(b, filepath.Join(root, "in"))
	src, _ := newSource()
	shards := src.NumShards()
	dirs, _, err := writeParts(b, newSource, []int{0, shards / 4, shards / 2, 3 * shards / 4, shards}, root)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(size)
	b.ResetTimer()
	var ms *MergeStats
	for i := range b.N {
		out := filepath.Join(b.TempDir(), fmt.Sprint("out", i))
		if _, ms, err = MergeParts(context.Background(), dirs, out, RowsOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ms.CopiedBytes+ms.LinkedBytes), "copied-B/op")
	b.ReportMetric(float64(ms.WrittenBytes), "written-B/op")
}

// BenchmarkMerge4InPlace is BenchmarkMerge4 over parts WriteRange wrote
// in place: the merge writes the edge cells and row_ptr.npy, and copies
// nothing.
func BenchmarkMerge4InPlace(b *testing.B) {
	root := b.TempDir()
	newSource, size := partBenchSource(b, filepath.Join(root, "in"))
	src, _ := newSource()
	shards := src.NumShards()
	dirs, pst, err := writeRanges(b, newSource, []int{0, shards / 4, shards / 2, 3 * shards / 4, shards}, root)
	if err != nil {
		b.Fatal(err)
	}
	if !pst[0].InPlace {
		b.Fatal("the parts were not written in place")
	}
	b.SetBytes(size)
	b.ResetTimer()
	var ms *MergeStats
	for i := range b.N {
		out := filepath.Join(b.TempDir(), fmt.Sprint("out", i))
		if _, ms, err = MergeParts(context.Background(), dirs, out, RowsOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ms.CopiedBytes), "copied-B/op")
	b.ReportMetric(float64(ms.WrittenBytes), "written-B/op")
}

// BenchmarkTasks4 writes the 4 parts BenchmarkMerge4 and
// BenchmarkMerge4InPlace merge, one task after the other: WritePart over
// each task's shards, and WriteRange, which also counts the values
// before them.
func BenchmarkTasks4(b *testing.B) {
	root := b.TempDir()
	newSource, size := partBenchSource(b, filepath.Join(root, "in"))
	src, _ := newSource()
	shards := src.NumShards()
	bounds := []int{0, shards / 4, shards / 2, 3 * shards / 4, shards}
	for _, c := range []struct {
		name  string
		write func(testing.TB, func() (dataset.PayloadSource, error), []int, string) ([]string, []*PartStats, error)
	}{{"WritePart", writeParts}, {"WriteRange", writeRanges}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				dir := b.TempDir()
				if _, _, err := c.write(b, newSource, bounds, dir); err != nil {
					b.Fatal(err)
				}
				os.RemoveAll(dir)
			}
		})
	}
}
