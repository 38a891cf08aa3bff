package loaders_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/all"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestShardBuildersSpillSameBytes: every loader's files, those of each
// shard and those that span the dataset, are the same bytes whether the
// shards' builders keep what they gather in memory or, past a budget of
// nothing (Memory -1: ShardMemory is a byte), in temporary files, which
// are gone at the end.
func TestShardBuildersSpillSameBytes(t *testing.T) {
	root := t.TempDir()
	var shards []string
	for k := range 3 {
		var files []string
		for i := range 400 {
			key := fmt.Sprintf("d%d/s%05d", i%3, k*1000+i)
			files = append(files, key+".jpg", "j", key+".cls", fmt.Sprint(i%10))
		}
		p := filepath.Join(root, "shards", fmt.Sprintf("data-%03d.tar", k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		testutil.WriteShard(t, p, files...)
		shards = append(shards, p)
	}
	run := func(name string, memory int64) map[string][]byte {
		out := filepath.Join(root, name)
		os.MkdirAll(out, 0o755)
		var ls []loaders.Loader
		for _, n := range loaders.Names() {
			l, err := loaders.New(n, loaders.Options{OutDir: out, Memory: memory, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
		}
		set := loaders.NewSet(ls...)
		if _, err := fold.BuildIndex(context.Background(), shards, "", fold.IndexOptions{Workers: 2, Loaders: set}); err != nil {
			t.Fatal(err)
		}
		if _, err := set.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		err := filepath.Walk(out, func(p string, fi os.FileInfo, err error) error {
			if err != nil || fi.IsDir() {
				return err
			}
			if strings.HasPrefix(fi.Name(), safefile.TempPrefix) {
				t.Errorf("%s: %s left behind", name, p)
			}
			b, err := os.ReadFile(p)
			got[strings.TrimPrefix(p, out)] = b
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want := run("memory", 0)
	got := run("spilled", -1)
	if len(want) < 3*4 {
		t.Fatalf("%d files written, want a few a shard", len(want))
	}
	for f, b := range want {
		if !bytes.Equal(got[f], b) {
			t.Errorf("%s: %d bytes with every builder spilled, %d in memory", f, len(got[f]), len(b))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d files spilled, %d in memory", len(got), len(want))
	}
}
