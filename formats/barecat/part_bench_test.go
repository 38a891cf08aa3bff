package barecat

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// benchArchive is the source both benchmarks below read: 4000 files of 0
// to 32 KiB (about 64 MiB) in a Barecat archive; the output rolls over
// at 16 MiB.
func benchArchive(b *testing.B) (index string, bytes int64) {
	files := genFiles(9, 4000, 32<<10)
	for _, f := range files {
		bytes += int64(len(f.data))
	}
	return makeArchive(b, files, nil), bytes
}

var benchOpts = RowsOptions{ShardSize: 16 << 20}

func removeArchive(b *testing.B, index string) {
	os.Remove(index)
	for i := 0; ; i++ {
		if os.Remove(ShardPath(index, i)) != nil {
			break
		}
	}
}

// syncModes runs a benchmark with the outputs synced before they are
// renamed into place (as they are), and without (what the disk's work
// leaves of the time).
func syncModes(b *testing.B, run func(b *testing.B)) {
	for _, sync := range []bool{true, false} {
		b.Run(map[bool]string{true: "sync", false: "nosync"}[sync], func(b *testing.B) {
			defer func(s bool) { fsync = s }(fsync)
			fsync = sync
			run(b)
		})
	}
}

// BenchmarkWriteRows is the single run over the dataset BenchmarkMerge4
// merges.
func BenchmarkWriteRows(b *testing.B) {
	index, size := benchArchive(b)
	mk := archiveSource(b, index)
	syncModes(b, func(b *testing.B) { benchWriteRows(b, mk, size) })
}

func benchWriteRows(b *testing.B, mk func() dataset.PayloadSource, size int64) {
	dir := b.TempDir()
	b.SetBytes(size)
	for i := 0; b.Loop(); i++ {
		out := filepath.Join(dir, fmt.Sprintf("out%d.barecat", i))
		if _, err := WriteRows(context.Background(), mk(), out, benchOpts); err != nil {
			b.Fatal(err)
		}
		removeArchive(b, out)
	}
}

// BenchmarkMerge4 merges 4 parts of BenchmarkWriteRows' dataset (written
// before the timer starts): the merge's own cost, beside the run's.
func BenchmarkMerge4(b *testing.B) {
	index, size := benchArchive(b)
	mk := archiveSource(b, index)
	n := mk().NumShards()
	var parts []string
	for k := range 4 {
		dir := filepath.Join(b.TempDir(), fmt.Sprint("part", k))
		os.Mkdir(dir, 0o755)
		src, err := dataset.Slice(mk(), k*n/4, (k+1)*n/4)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := WritePart(context.Background(), src, dir, benchOpts); err != nil {
			b.Fatal(err)
		}
		parts = append(parts, dir)
	}
	syncModes(b, func(b *testing.B) { benchMerge(b, parts, size) })
}

func benchMerge(b *testing.B, parts []string, size int64) {
	dir := b.TempDir()
	b.SetBytes(size)
	var ms *MergeStats
	for i := 0; b.Loop(); i++ {
		out := filepath.Join(dir, fmt.Sprintf("out%d.barecat", i))
		var err error
		if _, ms, err = MergeParts(context.Background(), parts, out, benchOpts); err != nil {
			b.Fatal(err)
		}
		removeArchive(b, out)
	}
	b.ReportMetric(float64(ms.BytesCopied), "bytes-copied/op")
	b.ReportMetric(float64(ms.BytesLinked), "bytes-linked/op")
	b.ReportMetric(float64(ms.ShardsCopied), "shards-copied/op")
}

// BenchmarkMerge4Rows merges 4 parts of 100k small files each (0 to 64
// bytes): the index's work, which the payload does not hide.
func BenchmarkMerge4Rows(b *testing.B) {
	files := genFiles(11, 400_000, 64)
	var size int64
	for _, f := range files {
		size += int64(len(f.data))
	}
	mk := archiveSource(b, makeArchive(b, files, nil))
	n := mk().NumShards()
	opts := RowsOptions{ShardSize: 4 << 20}
	var parts []string
	for k := range 4 {
		dir := filepath.Join(b.TempDir(), fmt.Sprint("part", k))
		os.Mkdir(dir, 0o755)
		src, err := dataset.Slice(mk(), k*n/4, (k+1)*n/4)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := WritePart(context.Background(), src, dir, opts); err != nil {
			b.Fatal(err)
		}
		parts = append(parts, dir)
	}
	b.Run("one", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; b.Loop(); i++ {
			out := filepath.Join(dir, fmt.Sprintf("out%d.barecat", i))
			if _, err := WriteRows(context.Background(), mk(), out, opts); err != nil {
				b.Fatal(err)
			}
			removeArchive(b, out)
		}
	})
	b.Run("merge", func(b *testing.B) {
		dir := b.TempDir()
		for i := 0; b.Loop(); i++ {
			out := filepath.Join(dir, fmt.Sprintf("out%d.barecat", i))
			if _, _, err := MergeParts(context.Background(), parts, out, opts); err != nil {
				b.Fatal(err)
			}
			removeArchive(b, out)
		}
	})
}
