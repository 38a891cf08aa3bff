package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
)

// BenchmarkBuildIndex times the in-process indexer on each dataset shape
// and read strategy. The datasets are small, so that generating them stays
// well under a few seconds; the indexbench command measures the real sizes
// against the tar baseline.
func BenchmarkBuildIndex(b *testing.B) {
	for _, d := range []Dataset{DatasetA.Scaled(20_000), DatasetB.Scaled(20_000)} {
		dir := b.TempDir()
		paths, err := d.Generate(context.Background(), dir)
		if err != nil {
			b.Fatal(err)
		}
		out := filepath.Join(dir, "bench.taridx")
		for _, name := range []string{"auto", "mmap", "pread", "sequential"} {
			strategy, err := tarfile.ParseStrategy(name)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%s", d.Name, name), func(b *testing.B) {
				opts := fold.IndexOptions{Workers: 2, Scan: tarfile.Options{Strategy: strategy}}
				b.ReportAllocs()
				for b.Loop() {
					// A fresh index each time, as indexbench does: replacing one
					// adds the file system's cost of freeing the old file.
					b.StopTimer()
					if err := os.Remove(out); err != nil && !os.IsNotExist(err) {
						b.Fatal(err)
					}
					b.StartTimer()
					st, err := fold.BuildIndex(context.Background(), paths, out, opts)
					if err != nil {
						b.Fatal(err)
					}
					if st.Rows != uint64(d.Members) {
						b.Fatalf("%d rows, %d members generated", st.Rows, d.Members)
					}
				}
				b.ReportMetric(float64(d.Members)*float64(b.N)/b.Elapsed().Seconds(), "members/s")
			})
		}
	}
}

// TestWalkHeaders: the floor walk counts every member, whichever read size
// it settles on (small members: chunks; large ones: one read per header).
func TestWalkHeaders(t *testing.T) {
	for _, d := range []Dataset{DatasetA.Scaled(1_000), DatasetB.Scaled(4_000)} {
		paths, err := d.Generate(context.Background(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		n, err := WalkHeaders(paths, 2)
		if err != nil {
			t.Fatal(err)
		}
		if n != int64(d.Members) {
			t.Errorf("dataset %s: walked %d members, generated %d", d.Name, n, d.Members)
		}
	}
}

// BenchmarkWalkHeaders is the floor BenchmarkBuildIndex compares with:
// reading and checking the headers, nothing else.
func BenchmarkWalkHeaders(b *testing.B) {
	for _, d := range []Dataset{DatasetA.Scaled(20_000), DatasetB.Scaled(20_000)} {
		paths, err := d.Generate(context.Background(), b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		b.Run(d.Name, func(b *testing.B) {
			for b.Loop() {
				if _, err := WalkHeaders(paths, 2); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(d.Members)*float64(b.N)/b.Elapsed().Seconds(), "members/s")
		})
	}
}
