package tbl

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// The partition benchmarks share one source: 8,192 samples of 1-20 KiB
// (32 shards as Source cuts them), the "mixed" bytes of the other
// benchmarks, read back by the format's own Source and written with LZ4.
// BenchmarkWriteRows is the single run; BenchmarkMerge4 merges 4 parts of
// the same run written once beforehand, which is what a partitioned run
// adds to its tasks' work.
func partBenchDataset(b *testing.B) *partDataset {
	_, mixed := benchData()
	ss := make([]srcSample, 8192)
	for i := range ss {
		ss[i] = srcSample{name: "sample" + string(rune('a'+i%26)) + ".jpg", data: mixed[i]}
	}
	path := filepath.Join(b.TempDir(), "bench.tbl")
	writeSourceTBL(b, path, 2, ss)
	return tblDatasetOf(b, "bench", path, nil)
}

var partBenchOpts = RowsOptions{LZ4: true}

func BenchmarkWriteRows(b *testing.B) {
	d := partBenchDataset(b)
	out := filepath.Join(b.TempDir(), "whole.tbl")
	var st *RowsStats
	for b.Loop() {
		var err error
		if st, err = WriteRows(context.Background(), d.whole, out, partBenchOpts); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(st.Bytes)
	fi, _ := os.Stat(out)
	b.ReportMetric(float64(fi.Size()), "out-bytes")
}

func BenchmarkMerge4(b *testing.B) {
	d := partBenchDataset(b)
	n := d.shards
	parts, _ := writeParts(b, d, []int{0, n / 4, n / 2, 3 * n / 4, n}, partBenchOpts, b.TempDir())
	out := filepath.Join(b.TempDir(), "merged.tbl")
	var st *RowsStats
	var ms *MergeStats
	for b.Loop() {
		var err error
		if st, ms, err = MergeParts(context.Background(), parts, out, partBenchOpts); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(st.Bytes)
	b.ReportMetric(float64(ms.BytesCopied), "copied-bytes")
	b.ReportMetric(float64(ms.EntriesRewritten), "entries")
}
