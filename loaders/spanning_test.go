package loaders_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/energon"
	"github.com/itarconv/itarconv/formats/wids"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/all"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestSpanningFilesSameBytes: the files that span the dataset (energon's
// .nv-meta, wids' shard index), joined from what each shard's worker
// prepared, are the same bytes whatever the number of workers and
// whether the shards' rows wait in memory or in a temporary file (a
// budget of nothing, or of a few shards), which is gone at the end.
func TestSpanningFilesSameBytes(t *testing.T) {
	root := t.TempDir()
	const nShards, perShard = 6, 150
	var shards []string
	for k := range nShards {
		var files []string
		for i := range perShard {
			// Keys unique in the dataset, out of order within and
			// across shards, with a name longer than the others now
			// and then.
			key := fmt.Sprintf("s%05d", ((k*perShard+i)*7919)%(nShards*perShard))
			if i%50 == 7 {
				key += "-" + string(bytes.Repeat([]byte("x"), 85))
			}
			files = append(files, key+".jpg", "j", key+".cls", fmt.Sprint(i%10))
		}
		p := filepath.Join(root, "shards", fmt.Sprintf("data-%03d.tar", k))
		os.MkdirAll(filepath.Dir(p), 0o755)
		testutil.WriteShard(t, p, files...)
		shards = append(shards, p)
	}
	run := func(name string, workers int, memory int64) map[string][]byte {
		out := filepath.Join(root, name)
		os.MkdirAll(out, 0o755)
		var ls []loaders.Loader
		for _, n := range loaders.Names() {
			l, err := loaders.New(n, loaders.Options{OutDir: out, Memory: memory})
			if err != nil {
				t.Fatal(err)
			}
			ls = append(ls, l)
		}
		set := loaders.NewSet(ls...)
		if _, err := fold.BuildIndex(context.Background(), shards, "", fold.IndexOptions{Workers: workers, Loaders: set}); err != nil {
			t.Fatal(err)
		}
		if _, err := set.Finish(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := map[string][]byte{}
		for _, f := range []string{energon.IndexFile, energon.UUIDFile, energon.SplitYAMLFile, energon.InfoJSONFile} {
			b, err := os.ReadFile(filepath.Join(out, energon.MetaDir, f))
			if err != nil {
				t.Fatal(err)
			}
			got[f] = b
		}
		b, err := os.ReadFile(filepath.Join(out, wids.DefaultName))
		if err != nil {
			t.Fatal(err)
		}
		got[wids.DefaultName] = b
		for _, dir := range []string{out, filepath.Join(root, "shards")} {
			ents, _ := os.ReadDir(dir)
			for _, e := range ents {
				if bytes.Contains([]byte(e.Name()), []byte("energon-rows")) {
					t.Errorf("%s: %s left behind", name, e.Name())
				}
			}
		}
		return got
	}
	want := run("w1", 1, 0)
	if len(want[energon.IndexFile]) < 64<<10 {
		t.Fatalf("index.sqlite of %d bytes: too small to test", len(want[energon.IndexFile]))
	}
	for _, c := range []struct {
		name    string
		workers int
		memory  int64
	}{{"w4", 4, 0}, {"w4-spooled", 4, -1}, {"w1-spooled", 1, -1}, {"w4-some", 4, 4000}} {
		got := run(c.name, c.workers, c.memory)
		for f, b := range want {
			if !bytes.Equal(got[f], b) {
				t.Errorf("%s: %s differs from the one of 1 worker, all in memory", c.name, f)
			}
		}
	}
}
