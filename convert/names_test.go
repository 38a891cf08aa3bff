package convert

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/testing/testutil"
)

// gzShards writes gzipped shards <prefix>-00000N.tar.gz in dir.
func gzShards(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	var paths []string
	for i := range n {
		key := fmt.Sprintf("%s-s%02d", prefix, i)
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(testutil.WriteShard(t, "", key+".jpg", strings.Repeat("j", 3000), key+".cls", fmt.Sprint(i)))
		zw.Close()
		p := filepath.Join(dir, fmt.Sprintf("%s-%06d.tar.gz", prefix, i))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}

// TestConvertKeepsShardNames: compressed shards into a directory keep
// their names, the index is named after them; with a shard size the new
// shards take the pattern given, else <fold>_NNNN.tar; a fold named gives
// glzn's names; names of two folds are not kept, and the run says so.
func TestConvertKeepsShardNames(t *testing.T) {
	ctx := context.Background()
	in := t.TempDir()
	val := gzShards(t, in, "imagenet-val", 3)
	files := func(dir string) []string {
		ents, _ := os.ReadDir(dir)
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		return names
	}

	out := filepath.Join(t.TempDir(), "out")
	res, err := Convert(ctx, val, out, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"imagenet-val-000000.tar", "imagenet-val-000001.tar", "imagenet-val-000002.tar", "imagenet-val.taridx", "imagenet-val.taridx.shards.json"}
	if got := files(out); !slices.Equal(got, want) {
		t.Errorf("kept names: %v, want %v", got, want)
	}
	if !strings.Contains(res.Summary, "into fold imagenet-val") || !strings.Contains(res.Summary, "their own names") || len(res.Warnings) != 0 {
		t.Errorf("summary %q, warnings %q", res.Summary, res.Warnings)
	}

	out = filepath.Join(t.TempDir(), "out")
	if _, err := Convert(ctx, val, out, ConvertOptions{Target: fold.CreateOptions{Fold: "val"}}); err != nil {
		t.Fatal(err)
	}
	if got := files(out); !slices.Equal(got, []string{"val.taridx", "val_0000.tar", "val_0001.tar", "val_0002.tar"}) {
		t.Errorf("a fold named: %v", got)
	}

	out = filepath.Join(t.TempDir(), "out")
	if _, err := Convert(ctx, val, out, ConvertOptions{ShardSize: 4 << 10, Target: fold.CreateOptions{Name: "val-%03d.tar"}}); err != nil {
		t.Fatal(err)
	}
	if got := files(out); len(got) < 4 || got[0] != "val-000.tar" || got[1] != "val-001.tar" || !slices.Contains(got, "val.taridx") {
		t.Errorf("new shards by a pattern: %v", got)
	}
	out = filepath.Join(t.TempDir(), "out")
	if _, err := Convert(ctx, val, out, ConvertOptions{ShardSize: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	if got := files(out); len(got) < 3 || got[0] != "train.taridx" || got[1] != "train_0000.tar" {
		t.Errorf("new shards: %v", got)
	}
	if _, err := Convert(ctx, val, filepath.Join(t.TempDir(), "out"), ConvertOptions{Target: fold.CreateOptions{Name: "val-%03d"}}); !errors.Is(err, tarfile.ErrNamePattern) {
		t.Errorf("a bad pattern: %v", err)
	}

	if _, err := Convert(ctx, val, Stream, ConvertOptions{Target: fold.CreateOptions{Name: "val-%03d.tar"}, Stdout: io.Discard}); !errors.Is(err, tarfile.ErrNamePattern) {
		t.Errorf("a pattern for a stream: %v", err)
	}

	train := gzShards(t, in, "imagenet-train", 1)
	out = filepath.Join(t.TempDir(), "out")
	res, err = Convert(ctx, append(train, val[0]), out, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := files(out); !slices.Equal(got, []string{"train.taridx", "train_0000.tar", "train_0001.tar"}) ||
		len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "imagenet-train, imagenet-val") {
		t.Errorf("two folds' names: %v, warnings %q", got, res.Warnings)
	}
}

// TestReshardPlainTar: plain tar shards into a directory with a shard size
// are written anew into shards of that size, named by the pattern, with
// the same members in the same order (it used to be refused as nothing to
// convert); without one, it still is.
func TestReshardPlainTar(t *testing.T) {
	ctx := context.Background()
	in := t.TempDir()
	var shards []string
	for i := range 2 {
		p := filepath.Join(in, fmt.Sprintf("data-%06d.tar", i))
		var members []string
		for j := range 4 {
			key := fmt.Sprintf("s%d%d", i, j)
			members = append(members, key+".jpg", strings.Repeat("j", 1500), key+".cls", fmt.Sprint(j))
		}
		testutil.WriteShard(t, p, members...)
		shards = append(shards, p)
	}
	names := func(paths []string) []string {
		var out []string
		for _, p := range paths {
			_, err := tarfile.Walk(p, tarfile.Options{}, func(m *tarfile.Member) error {
				out = append(out, string(m.Name))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return out
	}
	out := filepath.Join(t.TempDir(), "out")
	if _, err := Convert(ctx, shards, out, ConvertOptions{ShardSize: 4 << 10, Target: fold.CreateOptions{Name: "val-%03d.tar"}}); err != nil {
		t.Fatal(err)
	}
	written, _ := filepath.Glob(filepath.Join(out, "val-*.tar"))
	if len(written) < 4 || !slices.Equal(names(written), names(shards)) {
		t.Errorf("resharded into %d shards, members %v, want %v", len(written), names(written), names(shards))
	}
	if _, err := Convert(ctx, shards, filepath.Join(t.TempDir(), "out"), ConvertOptions{}); !errors.Is(err, ErrNothingToConvert) {
		t.Errorf("plain into plain: %v, want nothing to convert", err)
	}
}
