package barecat

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkWriterExternal100k is the SQLite side of wrapping a tar
// without copying it: 100,000 AddExternal rows (WebDataset-like paths, tar
// metadata, no CRC) into one linked shard, and Close (indexes, directory
// counters, triggers, sync, rename).
func BenchmarkWriterExternal100k(b *testing.B) {
	const n = 100_000
	dir := b.TempDir()
	tarPath := filepath.Join(dir, "data.tar")
	f, err := os.Create(tarPath)
	if err != nil {
		b.Fatal(err)
	}
	if err := f.Truncate(n * 2048); err != nil { // sparse: only the size matters
		b.Fatal(err)
	}
	f.Close()
	paths := make([]string, n)
	for i := range paths {
		paths[i] = fmt.Sprintf("train/%04d/sample%07d.%s", i/1000, i/3, [...]string{"jpg", "cls", "json"}[i%3])
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out := filepath.Join(dir, fmt.Sprintf("x%d.barecat", i))
		w, err := Create(out, WriterOptions{})
		if err != nil {
			b.Fatal(err)
		}
		shard, err := w.LinkShard(tarPath)
		if err != nil {
			b.Fatal(err)
		}
		for j, p := range paths {
			err := w.AddExternal(File{Path: p, Shard: shard, Offset: int64(j)*2048 + 512, Size: 1000 + int64(j%500),
				Mode: 0o644, HasMode: true, UID: 1000, HasUID: true, GID: 1000, HasGID: true,
				MtimeNs: 1700000000_000000000, HasMtime: true})
			if err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "files/s")
}

// BenchmarkWriterCopy copies 20,000 files of 1-20 KiB (about 200 MiB)
// from one source file, as a tar would hold them, into an archive (which
// syncs its shard and index before renaming them; "barecat-nosync" skips
// that), beside a plain copy of the same bytes with 128 KiB reads and
// writes, as cat does, with and without a final fsync.
func BenchmarkWriterCopy(b *testing.B) {
	const n = 20_000
	dir := b.TempDir()
	src := filepath.Join(dir, "src")
	rng := rand.New(rand.NewPCG(1, 2))
	sizes := make([]int64, n)
	offs := make([]int64, n)
	var total int64
	for i := range sizes {
		sizes[i] = 1024 + rng.Int64N(19*1024)
		offs[i] = total
		total += sizes[i]
	}
	data := make([]byte, total)
	for i := range data {
		data[i] = byte(i * 7 >> 3)
	}
	if err := os.WriteFile(src, data, 0o644); err != nil {
		b.Fatal(err)
	}
	data = nil
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()

	for _, sync := range []bool{false, true} {
		name := "cat"
		if sync {
			name = "cat+fsync"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(total)
			buf := make([]byte, 128<<10)
			for i := 0; i < b.N; i++ {
				p := filepath.Join(dir, "cat.out")
				out, err := os.Create(p)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := io.CopyBuffer(onlyWriter{out}, io.NewSectionReader(in, 0, total), buf); err != nil {
					b.Fatal(err)
				}
				if sync {
					if err := out.Sync(); err != nil {
						b.Fatal(err)
					}
				}
				out.Close()
				b.StopTimer()
				os.Remove(p)
				b.StartTimer()
			}
		})
	}
	for _, sync := range []bool{false, true} {
		name := "barecat-nosync"
		if sync {
			name = "barecat"
		}
		b.Run(name, func(b *testing.B) {
			defer func(s bool) { fsync = s }(fsync)
			fsync = sync
			benchCopy(b, dir, in, sizes, offs, total)
		})
	}
}

func benchCopy(b *testing.B, dir string, in *os.File, sizes, offs []int64, total int64) {
	{
		b.SetBytes(total)
		for i := 0; i < b.N; i++ {
			out := filepath.Join(dir, fmt.Sprintf("copy%d.barecat", i))
			w, err := Create(out, WriterOptions{})
			if err != nil {
				b.Fatal(err)
			}
			for j := range sizes {
				p := fmt.Sprintf("train/%03d/sample%06d.jpg", j/1000, j)
				if err := w.Add(File{Path: p, Size: sizes[j]}, io.NewSectionReader(in, offs[j], sizes[j])); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			os.Remove(out)
			os.Remove(ShardPath(out, 0))
			b.StartTimer()
		}
	}
}

// onlyWriter hides ReadFrom, so that the copy goes through the buffer as
// cat's does, not copy_file_range.
type onlyWriter struct{ io.Writer }
