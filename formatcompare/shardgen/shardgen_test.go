package shardgen

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// Two shapes: few members of up to 20 KiB, and many tiny ones (down to
// empty payloads), as the benchmarks' datasets A and B.
var (
	large = Dataset{Name: "large", Fold: "train", Members: 100, Shards: 8, MinSize: 1 << 10, MaxSize: 20 << 10, Seed: 1}
	tiny  = Dataset{Name: "tiny", Fold: "train", Members: 100, Shards: 8, MinSize: 0, MaxSize: 400, Seed: 2}
)

// TestGenerateDeterministic: the benchmark compares runs, so a seed must
// always give the same bytes, and a different seed different ones.
func TestGenerateDeterministic(t *testing.T) {
	d := tiny.Scaled(4_000)
	hash := func(d Dataset) string {
		h := sha256.New()
		for i := range d.Shards {
			if err := d.WriteShard(context.Background(), h, i); err != nil {
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
	paths, err := d.Generate(context.Background(), dir)
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

// TestGeneratePinned: the same parameters give the same bytes on every
// machine and in every release, because the benchmarks reuse a kept
// dataset directory on its parameters alone (bench.Prepare). A change to
// the generator's output must change this digest on purpose.
func TestGeneratePinned(t *testing.T) {
	h := sha256.New()
	for i := range tiny.Shards {
		if err := tiny.WriteShard(context.Background(), h, i); err != nil {
			t.Fatal(err)
		}
	}
	const want = "840e1c447690b28811feedf624a4a4702702f963220b687b0e06bc849b527d36"
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Errorf("dataset %+v: sha256 %s, want %s", tiny, got, want)
	}
}

// TestGenerateLayout checks the shards with Go's own tar reader: whole
// samples in order, .jpg before .cls, sizes within bounds, ustar headers.
func TestGenerateLayout(t *testing.T) {
	d := large.Scaled(202) // 101 samples: shards of unequal sizes
	paths, err := d.Generate(context.Background(), t.TempDir())
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

// cancelAfter cancels its context once n bytes have been written to it.
type cancelAfter struct {
	n      int
	cancel context.CancelFunc
}

func (w *cancelAfter) Write(p []byte) (int, error) {
	if w.n -= len(p); w.n <= 0 {
		w.cancel()
	}
	return len(p), nil
}

// TestGenerateCanceled: a canceled generation stops between two samples
// and leaves no shard behind, whole or partial.
func TestGenerateCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelAfter{n: 1, cancel: cancel}
	if err := large.WriteShard(ctx, w, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("WriteShard: %v, want %v", err, context.Canceled)
	}
	// The sample begun is finished: two members, each a header, a payload
	// and its padding.
	if over := -w.n; over > 2*(large.MaxSize+1024) {
		t.Errorf("WriteShard went on for %d bytes after the cancel", over)
	}

	dir := t.TempDir()
	paths, err := large.Generate(ctx, dir)
	if !errors.Is(err, context.Canceled) || paths != nil {
		t.Fatalf("Generate: %v, %v; want %v", paths, err, context.Canceled)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) > 0 {
		t.Errorf("a canceled Generate left %v", left)
	}
}
