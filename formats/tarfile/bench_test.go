package tarfile

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"testing"
)

// benchArchive is a tar of n small members, written by the Writer.
func benchArchive(b *testing.B, n int) []byte {
	dir := b.TempDir()
	w, err := Create(WriterOptions{Dir: dir, Fold: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	payload := bytes.Repeat([]byte("p"), 300)
	for i := range n {
		m := Member{Name: fmt.Appendf(nil, "%09d.values.npy", i), Typeflag: TypeReg, Size: int64(len(payload)), Mode: 0o644, ModTime: 1700000000}
		if _, err := w.AddBytes(m, payload); err != nil {
			b.Fatal(err)
		}
	}
	shards, err := w.Close()
	if err != nil {
		b.Fatal(err)
	}
	data, err := os.ReadFile(shards[0])
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// BenchmarkScan lists 10,000 small members held in memory: the scanner's
// header loop, without the file system.
func BenchmarkScan(b *testing.B) {
	data := benchArchive(b, 10_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		s := NewScanner(bytes.NewReader(data), int64(len(data)), "", Options{})
		for {
			if _, err := s.Next(); err == io.EOF {
				break
			} else if err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkWriterAddBytes writes 10,000 small members by the writer's fast
// ustar path.
func BenchmarkWriterAddBytes(b *testing.B) {
	const n = 10_000
	names := make([][]byte, n)
	for i := range names {
		names[i] = fmt.Appendf(nil, "%09d.values.npy", i)
	}
	payload := bytes.Repeat([]byte("p"), 300)
	b.SetBytes(n * (512 + 512))
	b.ReportAllocs()
	for b.Loop() {
		w, err := Create(WriterOptions{Dir: b.TempDir(), Fold: "bench"})
		if err != nil {
			b.Fatal(err)
		}
		for _, name := range names {
			m := Member{Name: name, Typeflag: TypeReg, Size: int64(len(payload)), Mode: 0o644, ModTime: 1700000000}
			if _, err := w.AddBytes(m, payload); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeaderSum: the sum over a header block that every scanned
// member's checksum needs.
func BenchmarkHeaderSum(b *testing.B) {
	block := make([]byte, BlockSize)
	for i := range block {
		block[i] = byte(i * 7)
	}
	b.SetBytes(BlockSize)
	var sum int64
	for b.Loop() {
		sum += unsignedSum(block)
	}
	if sum == 0 {
		b.Fatal("no sum")
	}
}
