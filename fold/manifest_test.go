package fold

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.Mkdir(data, 0o755)
	var shards []string
	for i, n := range []string{"imagenet-train-000000.tar", "imagenet-train-000001.tar"} {
		p := filepath.Join(data, n)
		os.WriteFile(p, make([]byte, 512*(i+1)), 0o644)
		shards = append(shards, p)
	}
	idx := filepath.Join(dir, "out", "imagenet-train.taridx")
	os.Mkdir(filepath.Dir(idx), 0o755)
	f, err := stageManifest(idx, shards, nil)
	if err != nil || f == nil {
		t.Fatalf("stageManifest: %v, %v", f, err)
	}
	if err := commitManifest(idx, f); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(idx)
	if err != nil {
		t.Fatal(err)
	}
	want := []ManifestShard{{Path: "../data/imagenet-train-000000.tar", Size: 512}, {Path: "../data/imagenet-train-000001.tar", Size: 1024}}
	if !reflect.DeepEqual(m.Shards, want) || m.Index != "imagenet-train.taridx" {
		t.Fatalf("manifest %+v", m)
	}
	if got := m.Paths(filepath.Dir(idx)); !samePath(got[1], shards[1]) {
		t.Errorf("Paths = %v", got)
	}
	// Sizes the caller knows (a merge's, recorded by its tasks) are
	// taken as they are: no shard is stat'ed.
	gone := []string{filepath.Join(data, "gone-0.tar"), filepath.Join(data, "gone-1.tar")}
	f, err = stageManifest(idx, gone, []int64{7, 9})
	if err != nil {
		t.Fatalf("stageManifest with sizes: %v", err)
	}
	if err := commitManifest(idx, f); err != nil {
		t.Fatal(err)
	}
	if m, err := ReadManifest(idx); err != nil || m.Shards[0].Size != 7 || m.Shards[1].Size != 9 {
		t.Errorf("manifest from known sizes: %+v, %v", m, err)
	}
	// glzn's naming beside the index needs no manifest, and one left
	// there goes.
	glzn := filepath.Join(dir, "g")
	os.Mkdir(glzn, 0o755)
	a, b := filepath.Join(glzn, "train_0.tar"), filepath.Join(glzn, "train_1.tar")
	os.WriteFile(a, nil, 0o644)
	os.WriteFile(b, nil, 0o644)
	gidx := filepath.Join(glzn, "train.taridx")
	if NeedsManifest(gidx, []string{a, b}) || !NeedsManifest(gidx, []string{b, a}) || !NeedsManifest(gidx, []string{a}) {
		t.Error("NeedsManifest: glzn's fold, in its order and whole, needs none; anything else does")
	}
	os.WriteFile(ManifestPath(gidx), []byte("stale"), 0o644)
	if err := commitManifest(gidx, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ManifestPath(gidx)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale manifest kept: %v", err)
	}
}

func TestReadManifestErrors(t *testing.T) {
	for name, body := range map[string]string{
		"not json":    "shards",
		"other kind":  `{"kind":"x","version":1,"shards":[{"path":"a.tar","size":1}]}`,
		"version":     `{"kind":"itarconv-shards","version":2,"shards":[{"path":"a.tar","size":1}]}`,
		"no shards":   `{"kind":"itarconv-shards","version":1,"shards":[]}`,
		"empty path":  `{"kind":"itarconv-shards","version":1,"shards":[{"path":"","size":1}]}`,
		"negative":    `{"kind":"itarconv-shards","version":1,"shards":[{"path":"a.tar","size":-1}]}`,
		"size string": `{"kind":"itarconv-shards","version":1,"shards":[{"path":"a.tar","size":"1"}]}`,
	} {
		idx := filepath.Join(t.TempDir(), "x.taridx")
		os.WriteFile(ManifestPath(idx), []byte(body), 0o644)
		if _, err := ReadManifest(idx); !errors.Is(err, ErrManifest) {
			t.Errorf("%s: %v, want ErrManifest", name, err)
		}
	}
	if _, err := ReadManifest(filepath.Join(t.TempDir(), "none.taridx")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no manifest: %v", err)
	}
}

// FuzzReadManifest: any bytes give a manifest with shards of names and
// sizes that make sense, or ErrManifest.
func FuzzReadManifest(f *testing.F) {
	f.Add([]byte(`{"kind":"itarconv-shards","version":1,"index":"x.taridx","shards":[` + "\n" + ` {"path":"a-000000.tar","size":10240}` + "\n]}\n"))
	f.Add([]byte(`{"kind":"itarconv-shards","version":1,"shards":[{"path":"../d/a.tar","size":0},{"path":"/abs/b.tar","size":1}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		idx := filepath.Join(t.TempDir(), "x.taridx")
		os.WriteFile(ManifestPath(idx), b, 0o644)
		m, err := ReadManifest(idx)
		if err != nil {
			if !errors.Is(err, ErrManifest) {
				t.Fatalf("%v is not ErrManifest", err)
			}
			return
		}
		if len(m.Paths("/x")) != len(m.Shards) || len(m.Shards) == 0 {
			t.Fatalf("manifest %+v", m)
		}
		for _, s := range m.Shards {
			if s.Path == "" || s.Size < 0 {
				t.Fatalf("shard %+v", s)
			}
		}
	})
}
