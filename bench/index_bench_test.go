package bench

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
)

// TestGenerateDeterministic: the benchmark compares runs, so a seed must
// always give the same bytes, and a different seed different ones.
func TestGenerateDeterministic(t *testing.T) {
	d := DatasetB.Scaled(4_000)
	hash := func(d Dataset) string {
		h := sha256.New()
		for i := range d.Shards {
			if err := d.WriteShard(h, i); err != nil {
				t.Fatal(err)
			}
		}
		return fmt.Sprintf("%x", h.Sum(nil))
	}
	first := hash(d)
	if again := hash(d); again != first {
		t.Fatalf("same seed, different bytes: %s then %s", first, again)
	}
	other := d
	other.Seed++
	if hash(other) == first {
		t.Fatal("different seeds gave the same bytes")
	}

	// Generate (parallel, buffered) must write what WriteShard streams.
	dir := t.TempDir()
	paths, err := d.Generate(dir)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, p := range paths {
		if err := copyFile(h, p); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != first {
		t.Fatalf("Generate wrote %s, WriteShard %s", got, first)
	}
}

// TestGenerateLayout checks the shards with Go's own tar reader: whole
// samples in order, .jpg before .cls, sizes within bounds, ustar headers.
func TestGenerateLayout(t *testing.T) {
	d := DatasetA.Scaled(202) // 101 samples: shards of unequal sizes
	paths, err := d.Generate(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sample, total := 0, 0
	for i, p := range paths {
		if want := fmt.Sprintf("train_%04d.tar", i); filepath.Base(p) != want {
			t.Errorf("shard %d is %s, want %s", i, filepath.Base(p), want)
		}
		n := 0
		err := readTar(p, func(h *tar.Header) {
			want := fmt.Sprintf("s%07d.jpg", sample)
			if n%2 == 1 {
				want = fmt.Sprintf("s%07d.cls", sample)
				sample++
			}
			if h.Name != want || h.Format != tar.FormatUSTAR || h.Typeflag != tar.TypeReg ||
				h.Size < int64(d.MinSize) || h.Size > int64(d.MaxSize) {
				t.Errorf("%s: member %d is %q (%v, type %q, %d bytes), want %q", p, n, h.Name, h.Format, h.Typeflag, h.Size, want)
			}
			n++
		})
		if err != nil {
			t.Fatal(err)
		}
		if n != d.ShardMembers(i) {
			t.Errorf("%s: %d members, want %d", p, n, d.ShardMembers(i))
		}
		total += n
	}
	if total != d.Members {
		t.Errorf("%d members in all, want %d", total, d.Members)
	}
}

// BenchmarkBuildIndex times the in-process indexer on each dataset shape
// and read strategy. The datasets are small, so that generating them stays
// well under a few seconds; the indexbench command measures the real sizes
// against the tar baseline.
func BenchmarkBuildIndex(b *testing.B) {
	for _, d := range []Dataset{DatasetA.Scaled(20_000), DatasetB.Scaled(20_000)} {
		dir := b.TempDir()
		paths, err := d.Generate(dir)
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

func readTar(path string, each func(*tar.Header)) error {
	return withFile(path, func(r io.Reader) error {
		tr := tar.NewReader(r)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			each(h)
		}
	})
}

func copyFile(w io.Writer, path string) error {
	return withFile(path, func(r io.Reader) error {
		_, err := io.Copy(w, r)
		return err
	})
}

func withFile(path string, fn func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return fn(f)
}

// TestWalkHeaders: the floor walk counts every member, whichever read size
// it settles on (small members: chunks; large ones: one read per header).
func TestWalkHeaders(t *testing.T) {
	for _, d := range []Dataset{DatasetA.Scaled(1_000), DatasetB.Scaled(4_000)} {
		paths, err := d.Generate(t.TempDir())
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
		paths, err := d.Generate(b.TempDir())
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
