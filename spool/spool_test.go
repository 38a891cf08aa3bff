package spool

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/formats/compressed"
)

// neededInOrder: among many shards opened at once, Needed answers for the
// first shard that decides, in order: a missing shard before a compressed
// one is an error, after it not; every run the same.
func neededInOrder(t *testing.T, plain, gz string) {
	t.Helper()
	missing := filepath.Join(t.TempDir(), "missing.tar")
	set := func(at map[int]string) []string {
		shards := make([]string, 200)
		for i := range shards {
			shards[i] = cmp.Or(at[i], plain)
		}
		return shards
	}
	for range 20 {
		if need, err := Needed(set(map[int]string{150: missing, 170: gz})); need || !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("missing, then compressed: %v, %v", need, err)
		}
		if need, err := Needed(set(map[int]string{150: gz, 170: missing})); !need || err != nil {
			t.Fatalf("compressed, then missing: %v, %v", need, err)
		}
		if need, err := Needed(set(map[int]string{199: "https://example.com/x.tar"})); !need || err != nil {
			t.Fatalf("a URL last: %v, %v", need, err)
		}
		if need, err := Needed(set(nil)); need || err != nil {
			t.Fatalf("all plain: %v, %v", need, err)
		}
	}
}

func TestSpool(t *testing.T) {
	dir := t.TempDir()
	data := testutil.PlainData(2 << 20)
	plain := filepath.Join(dir, "a.tar")
	gz := filepath.Join(dir, "b.tar.gz")
	os.WriteFile(plain, data, 0o644)
	os.WriteFile(gz, testutil.CompressWith(t, "gzip", data), 0o644)
	if need, err := Needed([]string{plain}); need || err != nil {
		t.Errorf("Needed(plain) = %v, %v", need, err)
	}
	if need, err := Needed([]string{plain, gz}); !need || err != nil {
		t.Errorf("Needed(plain, gzip) = %v, %v", need, err)
	}
	neededInOrder(t, plain, gz)
	out := t.TempDir()
	s := New(out, bytes.NewReader(testutil.CompressWith(t, "zstd", data)))
	if p, err := s.Plain(context.Background(), plain); p != plain || err != nil || s.Codec(plain) != compressed.None {
		t.Errorf("a plain shard is itself: %s, %v", p, err)
	}
	// Asked for at once, a shard is decompressed once.
	var wg sync.WaitGroup
	paths := make([]string, 4)
	for k := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[k], _ = s.Plain(context.Background(), gz)
		}()
	}
	wg.Wait()
	for _, p := range paths[1:] {
		if p != paths[0] {
			t.Fatalf("two copies: %s, %s", paths[0], p)
		}
	}
	stdin, err := s.Plain(context.Background(), Stdin)
	if err != nil || s.Codec(Stdin) != compressed.Zstd || s.Codec(gz) != compressed.Gzip {
		t.Fatalf("stdin: %v, codecs %q %q", err, s.Codec(Stdin), s.Codec(gz))
	}
	for _, p := range []string{paths[0], stdin} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, data) || filepath.Dir(p) != out {
			t.Errorf("%s: not the plain bytes in %s", p, out)
		}
	}
	s.Close()
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
	if _, err := os.Stat(plain); err != nil {
		t.Errorf("Close removed a plain shard: %v", err)
	}
	var none *Spool
	if p, err := none.Plain(context.Background(), gz); p != gz || err != nil {
		t.Errorf("nil spool: %s, %v", p, err)
	}
}

func TestSpoolCorruptLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	z := testutil.CompressWith(t, "gzip", testutil.PlainData(1<<20))
	bad := filepath.Join(dir, "bad.tar.gz")
	os.WriteFile(bad, z[:len(z)-100], 0o644)
	out := t.TempDir()
	s := New(out, nil)
	if _, err := s.Plain(context.Background(), bad); !errors.Is(err, compressed.ErrCorrupt) {
		t.Fatalf("Plain: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// BenchmarkNeeded tells 2,000 plain shards from compressed ones, several
// at a time (atonce) and, the baseline in the same run, one at a time
// (serial).
func BenchmarkNeeded(b *testing.B) {
	dir := b.TempDir()
	data := testutil.PlainData(4 << 10)
	var shards []string
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprintf("s%05d.tar", i))
		os.WriteFile(p, data, 0o644)
		shards = append(shards, p)
	}
	defer func(w int) { detectWidth = w }(detectWidth)
	for _, c := range []struct {
		name  string
		width int
	}{{"serial", 1}, {"atonce", detectWidth}} {
		b.Run(c.name, func(b *testing.B) {
			detectWidth = c.width
			for b.Loop() {
				if need, err := Needed(shards); need || err != nil {
					b.Fatal(need, err)
				}
			}
		})
	}
}
