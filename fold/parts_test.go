package fold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/testing/testutil"
)

// outputs reads every file under dir but the shards, by name, and removes
// them.
func takeOutputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".tar") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return os.Remove(p)
	})
	return files
}

func sizesOf(t *testing.T, paths []string) []int64 {
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = fi.Size()
	}
	return sizes
}

// TestIndexPartsCompatGLZN: glzn's rows (every header block) merge the
// same way.
func TestIndexPartsCompatGLZN(t *testing.T) {
	ctx := context.Background()
	dir, shards := testutil.CopyShards(t, filepath.Join("..", "formats", "energon", "testdata", "dirs_links_gnutar"))
	out := filepath.Join(dir, "out.taridx")
	if _, err := BuildIndex(ctx, shards, out, IndexOptions{CompatGLZN: true}); err != nil {
		t.Fatal(err)
	}
	want := takeOutputs(t, dir)
	var parts []string
	for k := range len(shards) {
		part := t.TempDir()
		if _, err := IndexPart(ctx, shards, k, k+1, true, part, IndexOptions{CompatGLZN: true}); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	if _, err := MergeIndexParts(ctx, shards, parts, out, IndexOptions{CompatGLZN: true}); err != nil {
		t.Fatal(err)
	}
	got := takeOutputs(t, dir)
	if !bytes.Equal(got["out.taridx"], want["out.taridx"]) || len(want["out.taridx"]) == 0 {
		t.Error("glzn's rows merged differ from one run's")
	}
}

// TestIndexPartDamaged: a part's TARIDX part cut short, or made of other
// bytes, is an error naming the file and the offset, and leaves no index.
func TestIndexPartDamaged(t *testing.T) {
	ctx := context.Background()
	dir, shards := testutil.CopyShards(t, filepath.Join("..", "formats", "energon", "testdata", "webdataset"))
	part := t.TempDir()
	if _, err := IndexPart(ctx, shards, 0, len(shards), true, part, IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.taridx")
	for _, c := range []struct {
		file string
		edit func([]byte) []byte
		want string
	}{
		{taridx.PartFile, func(b []byte) []byte { return b[:len(b)-3] }, "not a part of this version"},
		{taridx.PartFile, func(b []byte) []byte { return slices.Concat(b[:32], b[64:]) }, "stem records and"},
		{taridx.PartFile, func(b []byte) []byte { return []byte(strings.Replace(string(b), `"format":1`, `"format":9`, 1)) }, "part format 9"},
	} {
		p := filepath.Join(part, c.file)
		full, _ := os.ReadFile(p)
		if err := os.WriteFile(p, c.edit(full), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := MergeIndexParts(ctx, shards, []string{part}, out, IndexOptions{})
		if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.file, err)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: an index was left behind", c.file)
		}
		os.WriteFile(p, full, 0o644)
	}
	// A fid past the shards the merge is given.
	if _, err := MergeIndexParts(ctx, shards, []string{part}, out, IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := MergeIndexParts(ctx, shards[:1], []string{part}, out+"2", IndexOptions{}); !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), "of an index of 1 shards") {
		t.Errorf("a fid past the shards: %v", err)
	}
}

// TestMergePartsParallel: parts replayed several at a time give the
// bytes and figures of one run; a canceled merge writes nothing.
func TestMergePartsParallel(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var shards []string
	for k := range 7 {
		var files []string
		for i := range 300 {
			// Samples span shards: the stems of one come back in the next.
			s := (k*300 + i) / 3
			files = append(files, fmt.Sprintf("d%d/s%05d.%s", s%4, s, []string{"jpg", "cls", "json"}[i%3]), "x")
		}
		if k == 5 {
			files = append(files, "late.webp", "y") // an extension first seen late
		}
		path := filepath.Join(dir, fmt.Sprintf("shard-%d.tar", k))
		testutil.WriteShard(t, path, files...)
		shards = append(shards, path)
	}
	out := filepath.Join(dir, "out.taridx")
	one, err := BuildIndex(ctx, shards, out, IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(out)
	var parts []string
	for k := range len(shards) {
		part := t.TempDir()
		if _, err := IndexPart(ctx, shards, k, k+1, true, part, IndexOptions{}); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	for _, opts := range []IndexOptions{{Workers: 1}, {Workers: 3}, {Workers: 8}} {
		st, err := MergeIndexParts(ctx, shards, parts, out, opts)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("workers %d: merged index differs from one run's", opts.Workers)
		}
		if st.Rows != one.Rows || st.Stems != one.Stems || fmt.Sprint(st.Exts) != fmt.Sprint(one.Exts) || st.Contiguous != one.Contiguous {
			t.Errorf("figures %+v, want %+v", st, one)
		}
		os.Remove(out)
	}
	// A canceled merge writes nothing.
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := MergeIndexParts(canceled, shards, parts, out, IndexOptions{Workers: 2}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled merge: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("canceled merge left %s: %v", out, err)
	}
}
