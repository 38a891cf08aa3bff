package ratarmount

import (
	"archive/tar"
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// BenchmarkWriteTo indexes a shard of 10,000 members in 1,000 directories:
// the scan, Builder.Add and WriteTo.
func BenchmarkWriteTo(b *testing.B) {
	var a archive
	for i := range 10_000 {
		a.file(hdr{name: fmt.Sprintf("d%03d/%06d.jpg", i/10, i)}, "payload")
	}
	dir := b.TempDir()
	shard := a.write(b, dir)
	fi, err := os.Stat(shard)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		var bu Builder
		if _, err := tarfile.Walk(shard, tarfile.Options{}, bu.Add); err != nil {
			b.Fatal(err)
		}
		n++
		if err := bu.WriteTo(filepath.Join(dir, fmt.Sprintf("%d%s", n, Suffix)), fi); err != nil {
			b.Fatal(err)
		}
	}
}

// benchMembers is the size of the synthetic archive of
// BenchmarkIndex100k: enough members that the per-member costs (the row
// producer, the b-tree pages, sorting the autoindex of files) dwarf the
// fixed ones (creating the file, the schema, fsync).
const benchMembers = 100_000

// writeBenchArchive writes an archive of benchMembers regular files named
// dir/%08d.jpg of 16 bytes each, with Go's archive/tar as another tar
// writer would, and returns its path.
func writeBenchArchive(b *testing.B, dir string) string {
	b.Helper()
	p := filepath.Join(dir, "bench.tar")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	tw := tar.NewWriter(bw)
	payload := []byte("0123456789abcdef")
	mtime := time.Unix(1577836800, 0)
	for i := range benchMembers {
		h := &tar.Header{Name: fmt.Sprintf("dir/%08d.jpg", i), Mode: 0o644, Size: int64(len(payload)),
			ModTime: mtime, Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			b.Fatal(err)
		}
		if _, err := tw.Write(payload); err != nil {
			b.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkIndex100k times the index of an archive of 100,000 members in
// ns/member: "build" is the scan and Builder.Add alone (the pass over the
// headers that every loader's index shares), "write" is WriteTo alone
// (rows, b-trees, file, fsync), "total" both, as `itarconv index` does
// them for one shard. write is what this package adds to the pass.
func BenchmarkIndex100k(b *testing.B) {
	dir := b.TempDir()
	shard := writeBenchArchive(b, dir)
	fi, err := os.Stat(shard)
	if err != nil {
		b.Fatal(err)
	}
	build := func(b *testing.B) *Builder {
		bu := &Builder{}
		if _, err := tarfile.Walk(shard, tarfile.Options{}, bu.Add); err != nil {
			b.Fatal(err)
		}
		if bu.Len() != benchMembers {
			b.Fatalf("%d rows, want %d", bu.Len(), benchMembers)
		}
		return bu
	}
	n := 0
	write := func(b *testing.B, bu *Builder) {
		n++
		p := filepath.Join(dir, fmt.Sprintf("%d%s", n, Suffix))
		if err := bu.WriteTo(p, fi); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		os.Remove(p)
		b.StartTimer()
	}
	perMember := func(b *testing.B) {
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchMembers, "ns/member")
	}
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			build(b)
		}
		perMember(b)
	})
	b.Run("write", func(b *testing.B) {
		bu := build(b)
		b.ReportAllocs()
		for b.Loop() {
			write(b, bu)
		}
		perMember(b)
	})
	b.Run("total", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			write(b, build(b))
		}
		perMember(b)
	})
}
