package loaders_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/energon"
	"github.com/itarconv/itarconv/formats/wids"
	"github.com/itarconv/itarconv/loaders"
	daliloader "github.com/itarconv/itarconv/loaders/dali"
	energonloader "github.com/itarconv/itarconv/loaders/energon"
	ratarmountloader "github.com/itarconv/itarconv/loaders/ratarmount"
	widsloader "github.com/itarconv/itarconv/loaders/wids"
)

// foldShards writes, in dir, n shards of the fold named prefix
// (<prefix>-000000.tar, ...), each with a sample of its own, and returns
// them.
func foldShards(t *testing.T, dir, prefix string, n int) []string {
	t.Helper()
	var shards []string
	for i := range n {
		p := filepath.Join(dir, prefix+"-"+strings.Repeat("0", 5)+string(rune('0'+i))+".tar")
		key := prefix + string(rune('a'+i))
		testutil.WriteShard(t, p, key+".jpg", "jpeg "+key, key+".cls", "1")
		shards = append(shards, p)
	}
	return shards
}

// indexFolds indexes each fold in turn into the set, as the index command
// does for a directory (a pass per fold), then checks the outputs.
func indexFolds(t *testing.T, set *loaders.Set, folds ...[]string) ([]string, error) {
	t.Helper()
	for _, shards := range folds {
		if _, err := fold.BuildIndex(context.Background(), shards, "", fold.IndexOptions{Workers: 2, Loaders: set}); err != nil {
			t.Fatal(err)
		}
	}
	return set.Outputs()
}

// splitsOf are .nv-meta's split parts that list shards, by name, as
// energon reads them.
func splitsOf(t *testing.T, dir string) map[string][]string {
	t.Helper()
	m, err := energon.ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, s := range m.Splits {
		if len(s.Shards) > 0 {
			got[s.Name] = s.Shards
		}
	}
	return got
}

func bases(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// readWidsIndex reads a wids index: its name and its shards' URLs.
func readWidsIndex(t *testing.T, path string) (string, []string) {
	t.Helper()
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
	return ix.Name, urls
}

// TestTrainAndVal: a directory of train and val shards gets one energon
// dataset whose split.yaml lists the train shards under train and the val
// shards under val (byte for byte as energon prepare --split-parts writes
// it), and a wids index per fold, named after it; the per-shard loaders
// index every shard as before.
func TestTrainAndVal(t *testing.T) {
	dir := t.TempDir()
	train := foldShards(t, dir, "imagenet-train", 3)
	val := foldShards(t, dir, "imagenet-val", 2)
	set := loaders.NewSet(daliloader.New(""), energonloader.New(""), widsloader.New("", false), ratarmountloader.New(""))
	outs, err := indexFolds(t, set, train, val)
	if err != nil {
		t.Fatal(err)
	}
	trainIx, valIx := filepath.Join(dir, "imagenet-train.shardindex.json"), filepath.Join(dir, "imagenet-val.shardindex.json")
	for _, want := range []string{trainIx, valIx, filepath.Join(dir, energon.MetaDir, energon.SplitYAMLFile)} {
		if !slices.Contains(outs, want) {
			t.Errorf("outputs %v lack %s", outs, want)
		}
	}
	if slices.Contains(outs, filepath.Join(dir, wids.DefaultName)) {
		t.Errorf("outputs %v: one wids index of both folds", outs)
	}
	st, err := set.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Written["wids"] != 2 || st.Written["energon"] != 5+4 || st.Written["dali"] != 5 || st.Written["ratarmount"] != 5 {
		t.Errorf("written %v", st.Written)
	}
	got := splitsOf(t, dir)
	want := map[string][]string{"train": bases(train), "val": bases(val)}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("split parts %v, want %v", got, want)
	}
	// energon prepare --split-parts train:... --split-parts val:... over
	// these names (formats/energon/testdata/pyyaml/parts.json, case 0).
	b, err := os.ReadFile(filepath.Join("..", "formats", "energon", "testdata", "pyyaml", "parts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		SplitYAML string `json:"split_yaml"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	yaml, _ := os.ReadFile(filepath.Join(dir, energon.MetaDir, energon.SplitYAMLFile))
	if string(yaml) != cases[0].SplitYAML {
		t.Errorf("split.yaml\n%s\nwant energon's\n%s", yaml, cases[0].SplitYAML)
	}
	for ix, shards := range map[string][]string{trainIx: train, valIx: val} {
		name, urls := readWidsIndex(t, ix)
		if want := strings.TrimSuffix(filepath.Base(ix), ".shardindex.json"); name != want {
			t.Errorf("%s: name %q, want %q", ix, name, want)
		}
		if !reflect.DeepEqual(urls, bases(shards)) {
			t.Errorf("%s: shards %v, want %v", ix, urls, bases(shards))
		}
		if rep, err := loaders.Check(context.Background(), ix, nil, 1); err != nil || !rep.OK() {
			t.Errorf("%s: check %v %+v", ix, err, rep)
		}
	}
	if rep, err := loaders.Check(context.Background(), filepath.Join(dir, energon.MetaDir), nil, 1); err != nil || !rep.OK() {
		t.Errorf(".nv-meta: check %v %+v", err, rep)
	}
}

// TestSplitsRefused: folds whose names do not tell their split parts, or
// two that look alike, stop energon's index before anything is written,
// saying how to give the parts; --split's mapping then writes them.
func TestSplitsRefused(t *testing.T) {
	for _, c := range []struct {
		folds  []string
		why    string
		splits []string
		want   map[string][]string // fold -> parts, with splits
	}{
		{folds: []string{"other", "shards"}, why: "fold other tells none; fold shards tells none",
			splits: []string{"shards=train", "other=val"}, want: map[string][]string{"train": {"shards"}, "val": {"other"}}},
		{folds: []string{"coco-train", "imagenet-train"}, why: "fold coco-train, fold imagenet-train all look like train",
			splits: []string{"coco-train=train", "imagenet-train=train"}, want: map[string][]string{"train": {"coco-train", "imagenet-train"}}},
		{folds: []string{"extra", "imagenet-train", "imagenet-val"}, why: "fold extra tells none",
			splits: []string{"*=test"}, want: map[string][]string{"train": {"imagenet-train"}, "val": {"imagenet-val"}, "test": {"extra"}}},
	} {
		t.Run(c.folds[0], func(t *testing.T) {
			dir := t.TempDir()
			var folds [][]string
			byFold := map[string][]string{}
			for _, f := range c.folds {
				shards := foldShards(t, dir, f, 1)
				folds = append(folds, shards)
				byFold[f] = shards
			}
			set := loaders.NewSet(energonloader.New(""), widsloader.New("", false))
			_, err := indexFolds(t, set, folds...)
			if !errors.Is(err, loaders.ErrSplit) || !strings.Contains(err.Error(), c.why) || !strings.Contains(err.Error(), "--split "+c.folds[0]+"=") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("outputs: err = %v", err)
			}
			if _, err := set.Finish(context.Background()); !errors.Is(err, loaders.ErrSplit) {
				t.Fatalf("finish: err = %v", err)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != len(c.folds)*2 { // shards and .tar.idx
				t.Errorf("files written: %v", ents)
			}

			var sp loaders.Splits
			for _, s := range c.splits {
				if err := sp.Set(s); err != nil {
					t.Fatal(err)
				}
			}
			set = loaders.NewSet(energonloader.New(""), widsloader.New("", false))
			set.SetSplits(sp)
			if _, err := indexFolds(t, set, folds...); err != nil {
				t.Fatal(err)
			}
			if _, err := set.Finish(context.Background()); err != nil {
				t.Fatal(err)
			}
			want := map[string][]string{}
			for part, fs := range c.want {
				for _, f := range fs {
					want[part] = append(want[part], bases(byFold[f])...)
				}
			}
			if got := splitsOf(t, dir); !reflect.DeepEqual(got, want) {
				t.Errorf("split parts %v, want %v", got, want)
			}
		})
	}
}

// TestOneFoldAsBefore: a dataset of one fold, whatever its name, is all
// train, in split.yaml as energon prepare --split-ratio 1,0,0 writes it,
// with one shardindex.json; wids alone needs no split parts.
func TestOneFoldAsBefore(t *testing.T) {
	dir := t.TempDir()
	shards := foldShards(t, dir, "imagenet-val", 2)
	set := loaders.NewSet(energonloader.New(""), widsloader.New("", false))
	if _, err := indexFolds(t, set, shards); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Finish(context.Background()); err != nil {
		t.Fatal(err)
	}
	yaml, _ := os.ReadFile(filepath.Join(dir, energon.MetaDir, energon.SplitYAMLFile))
	if want := "split_parts:\n  train:\n  - imagenet-val-{000000..000001}.tar\n  val: []\n  test: []\nexclude: []\n"; string(yaml) != want {
		t.Errorf("split.yaml\n%s\nwant\n%s", yaml, want)
	}
	if name, urls := readWidsIndex(t, filepath.Join(dir, wids.DefaultName)); name != "imagenet-val" || len(urls) != 2 {
		t.Errorf("shardindex.json: %q %v", name, urls)
	}

	// Folds of no split part, for wids alone: an index each.
	dir = t.TempDir()
	a, b := foldShards(t, dir, "shards", 1), foldShards(t, dir, "other", 1)
	set = loaders.NewSet(widsloader.New("", false))
	if _, err := indexFolds(t, set, a, b); err != nil {
		t.Fatal(err)
	}
	if st, err := set.Finish(context.Background()); err != nil || st.Written["wids"] != 2 {
		t.Fatalf("%v %v", st, err)
	}
	for _, f := range []string{"shards", "other"} {
		if name, urls := readWidsIndex(t, filepath.Join(dir, f+".shardindex.json")); name != f || len(urls) != 1 {
			t.Errorf("%s: %q %v", f, name, urls)
		}
	}
}

func TestSplitOf(t *testing.T) {
	for name, want := range map[string]string{
		"imagenet-train": "train", "imagenet-val": "val", "validation": "val", "coco_train2017": "train",
		"test": "test", "Val": "val", "shards": "", "trainval": "", "train-val": "", "": "", "retrain": "",
	} {
		if got := loaders.SplitOf(name); got != want {
			t.Errorf("SplitOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestSplitsFlag(t *testing.T) {
	var s loaders.Splits
	for _, v := range []string{"imagenet-val=val", " a = train ", "*=test", "imagenet-val=val"} {
		if err := s.Set(v); err != nil {
			t.Errorf("%q: %v", v, err)
		}
	}
	if got := s.String(); got != "*=test,a=train,imagenet-val=val" {
		t.Errorf("String %q", got)
	}
	for _, v := range []string{"imagenet-val", "=val", "a=validation", "a=", "imagenet-val=train"} {
		if err := s.Set(v); err == nil {
			t.Errorf("%q taken", v)
		}
	}
}
