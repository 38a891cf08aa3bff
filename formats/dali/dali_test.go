package dali

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// index builds a shard's index from its regular members.
func index(t *testing.T, shard string) ([]byte, error) {
	t.Helper()
	var b Builder
	_, err := tarfile.Walk(shard, tarfile.Options{}, func(m *tarfile.Member) error {
		if m.IsRegular() {
			b.Add(string(m.Name), m.DataOffset, m.Size)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", shard, err)
	}
	var out bytes.Buffer
	_, err = b.WriteTo(&out)
	return out.Bytes(), err
}

// TestOracle: every shard of testdata gets, byte for byte, the index DALI's
// wds2idx wrote for it, and a shard it could not index is ErrEmpty.
func TestOracle(t *testing.T) {
	shards, _ := filepath.Glob(filepath.Join("testdata", "*", "*.tar"))
	if len(shards) < 15 {
		t.Fatalf("only %d shards in testdata", len(shards))
	}
	compared := 0
	for _, shard := range shards {
		want, err := os.ReadFile(IndexPath(shard))
		got, gerr := index(t, shard)
		if errors.Is(err, os.ErrNotExist) {
			if !errors.Is(gerr, ErrEmpty) {
				t.Errorf("%s: wds2idx wrote no index; got %v", shard, gerr)
			}
			continue
		}
		if gerr != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v\ngot:\n%s\nwant:\n%s", shard, gerr, got, want)
			continue
		}
		// A name with a space is no index DALI reads back: Parse says so.
		samples, err := Parse(bytes.NewReader(got))
		spaced := strings.Contains(string(got), "my file.jpg")
		if spaced != errors.Is(err, ErrFormat) || !spaced && len(samples) == 0 {
			t.Errorf("%s: Parse: %d samples, %v", shard, len(samples), err)
		}
		compared++
	}
	if compared < 15 {
		t.Errorf("only %d indexes compared", compared)
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct{ name, key, ext string }{
		{"a/b.c.jpg", "a/b", "c.jpg"},
		{"d.x/y.jpg", "d.x/y", "jpg"},
		{"noext", "noex", "noext"},
		{"trailingdot.", "trailingdot", ""},
		{"x..y", "x", ".y"},
		{".hidden", "", "hidden"},
		{"dir/.hidden", "dir/", "hidden"},
	}
	for _, tt := range tests {
		if k, e := SplitName(tt.name); k != tt.key || e != tt.ext {
			t.Errorf("SplitName(%q) = %q, %q; want %q, %q", tt.name, k, e, tt.key, tt.ext)
		}
	}
}

func TestIndexPath(t *testing.T) {
	for shard, want := range map[string]string{
		"/d/imagenet-train-000000.tar": "/d/imagenet-train-000000.idx",
		"d/a.b.tar":                    "d/a.idx",
		"d/.x.tar":                     "d/.x.idx",
		"shard.tar.gz":                 "shard.idx",
	} {
		if got := IndexPath(shard); got != want {
			t.Errorf("IndexPath(%q) = %q, want %q", shard, got, want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for name, body := range map[string]string{
		"empty":         "",
		"version":       "v1.1 1\njpg 512 3 a.jpg\n",
		"count":         "v1.2 2\njpg 512 3 a.jpg\n",
		"fields":        "v1.2 1\njpg 512 3\n",
		"offset":        "v1.2 1\njpg x 3 a.jpg\n",
		"negative":      "v1.2 1\njpg 512 -3 a.jpg\n",
		"space in name": "v1.2 1\njpg 512 3 my file.jpg\n",
	} {
		if _, err := Parse(strings.NewReader(body)); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
}

// FuzzParse: any bytes parse into samples of sane components, or fail with
// ErrFormat.
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", "*.idx"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		samples, err := Parse(bytes.NewReader(b))
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%v is not ErrFormat", err)
			}
			return
		}
		for _, s := range samples {
			for _, c := range s {
				if c.Offset < 0 || c.Size < 0 || strings.ContainsAny(c.Name, " \n") {
					t.Fatalf("component %+v", c)
				}
			}
		}
	})
}

// TestBuilderRelease: a Builder that takes over a released one's memory
// writes its own index, not a byte of the other's.
func TestBuilderRelease(t *testing.T) {
	write := func(b *Builder) string {
		var out bytes.Buffer
		if _, err := b.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	var a Builder
	for i := range 1000 {
		a.Add(fmt.Sprintf("long/sample-name-%06d.jpg", i), int64(512*i), 100)
	}
	write(&a)
	a.Release()
	if a.Samples() != 0 {
		t.Fatal("a released Builder is not empty")
	}
	var b, fresh Builder
	b.Add("x.jpg", 512, 1)
	b.Add("x.cls", 1536, 2)
	fresh.Add("x.jpg", 512, 1)
	fresh.Add("x.cls", 1536, 2)
	if got, want := write(&b), write(&fresh); got != want || want != Version+" 1\njpg 512 1 x.jpg cls 1536 2 x.cls\n" {
		t.Fatalf("%q, want %q", got, want)
	}
}

// TestBuilderSpills: past Memory, a Builder's text goes to a temporary
// file and no longer grows in memory; the index is the same bytes.
func TestBuilderSpills(t *testing.T) {
	build := func(memory int) (*Builder, string) {
		b := &Builder{Memory: memory, TempDir: t.TempDir()}
		for i := range 3000 {
			key := fmt.Sprintf("d/s%05d", i/2)
			ext := []string{"jpg", "cls"}[i%2]
			b.Add(key+"."+ext, int64(512*(2*i+1)), int64(i%7))
		}
		var out bytes.Buffer
		if _, err := b.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		return b, out.String()
	}
	_, want := build(0)
	for _, m := range []int{1, 100, 4096} {
		b, got := build(m)
		if got != want {
			t.Errorf("Memory %d: the index differs from the one kept in memory", m)
		}
		if b.spilled == 0 || len(b.lines) > m+200 {
			t.Errorf("Memory %d: %d bytes spilled, %d in memory", m, b.spilled, len(b.lines))
		}
		b.Release()
	}
}
