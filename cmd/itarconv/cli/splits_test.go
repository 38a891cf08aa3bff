package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/wids"
)

// TestIndexTrainAndVal: index --format all of a directory of train and val
// shards keeps the splits apart: energon's split.yaml lists the val shards
// under val, not train, and wids gets an index per fold, named after it.
// Before, split.yaml put every shard in train and one shardindex.json
// listed both folds.
func TestIndexTrainAndVal(t *testing.T) {
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "imagenet-train-000000.tar"), "t0.jpg", "t0.cls")
	writeTar(t, filepath.Join(dir, "imagenet-train-000001.tar"), "t1.jpg", "t1.cls")
	writeTar(t, filepath.Join(dir, "imagenet-val-000000.tar"), "v0.jpg", "v0.cls")
	if code, _, stderr := run(t, "index", "-q", "--format", "all", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	split, err := os.ReadFile(filepath.Join(dir, ".nv-meta", "split.yaml"))
	want := "split_parts:\n  train:\n  - imagenet-train-{000000..000001}.tar\n  val:\n  - imagenet-val-000000.tar\nexclude: []\n"
	if err != nil || string(split) != want {
		t.Errorf("split.yaml: %v\n%s\nwant\n%s", err, split, want)
	}
	if _, err := os.Stat(filepath.Join(dir, wids.DefaultName)); err == nil {
		t.Errorf("one %s for both folds", wids.DefaultName)
	}
	for fold, shards := range map[string][]string{
		"imagenet-train": {"imagenet-train-000000.tar", "imagenet-train-000001.tar"},
		"imagenet-val":   {"imagenet-val-000000.tar"},
	} {
		path := filepath.Join(dir, fold+".shardindex.json")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ix, err := wids.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, s := range ix.Shards {
			urls = append(urls, s.URL)
		}
		if ix.Name != fold || !slices.Equal(urls, shards) {
			t.Errorf("%s: name %q, shards %v; want %q, %v", path, ix.Name, urls, fold, shards)
		}
		if code, stdout, _ := run(t, "verify", path); code != 0 {
			t.Errorf("verify %s: exit %d: %s", path, code, stdout)
		}
	}
	if code, stdout, _ := run(t, "verify", filepath.Join(dir, ".nv-meta")); code != 0 {
		t.Errorf("verify .nv-meta: exit %d: %s", code, stdout)
	}
}

// TestIndexSplitsRefused: folds whose names tell no split part stop the
// run before anything is written, with exit 2 and a line saying how to
// give them; --split gives them.
func TestIndexSplitsRefused(t *testing.T) {
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "shards-000000.tar"), "a.jpg", "a.cls")
	writeTar(t, filepath.Join(dir, "other-000000.tar"), "b.jpg", "b.cls")
	code, _, stderr := run(t, "index", "--format", "all", dir)
	if code != ExitUsage || !strings.Contains(stderr, "--split other=PART --split shards=PART") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "--help") {
		t.Errorf("not one line (and the help hint): %q", stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("written: %v", ents)
	}
	if code, _, stderr := run(t, "index", "-q", "--format", "all", "--split", "dev=val", "--split", "other=dev", dir); code != ExitUsage {
		t.Errorf("--split other=dev: exit %d: %s", code, stderr)
	}

	if code, _, stderr := run(t, "index", "-q", "--format", "all", "--split", "shards=train", "--split", "other=val", dir); code != 0 {
		t.Fatalf("with --split: exit %d: %s", code, stderr)
	}
	split, _ := os.ReadFile(filepath.Join(dir, ".nv-meta", "split.yaml"))
	if want := "split_parts:\n  train:\n  - shards-000000.tar\n  val:\n  - other-000000.tar\nexclude: []\n"; string(split) != want {
		t.Errorf("split.yaml\n%s\nwant\n%s", split, want)
	}
}
