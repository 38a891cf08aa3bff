package loaders_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/dali"
	"github.com/itarconv/itarconv/formats/energon"
	"github.com/itarconv/itarconv/formats/ratarmount"
	"github.com/itarconv/itarconv/formats/wids"
	"github.com/itarconv/itarconv/loaders"
	daliloader "github.com/itarconv/itarconv/loaders/dali"
	energonloader "github.com/itarconv/itarconv/loaders/energon"
	ratarmountloader "github.com/itarconv/itarconv/loaders/ratarmount"
	widsloader "github.com/itarconv/itarconv/loaders/wids"
)

// webShards writes two WebDataset shards (samples of a .jpg and a .cls)
// and returns them.
func webShards(t *testing.T, dir string) []string {
	t.Helper()
	a := filepath.Join(dir, "data-000.tar")
	b := filepath.Join(dir, "data-001.tar")
	testutil.WriteShard(t, a, "s0.jpg", "jpeg zero", "s0.cls", "0", "s1.jpg", "jpeg one!", "s1.cls", "1")
	testutil.WriteShard(t, b, "s2.jpg", strings.Repeat("2", 700), "s2.cls", "2")
	return []string{a, b}
}

func problemKinds(rep *loaders.Report) string {
	var ks []string
	for _, p := range rep.Problems {
		ks = append(ks, p.Kind+" "+p.Name)
	}
	sort.Strings(ks)
	return strings.Join(ks, "; ")
}

// TestLoaderIndexesCheck: the indexes every loader writes in one pass are
// found as their loader's, match their shards, and once a shard gains a
// sample, each index reports what it lacks or has stale; a shard gone, or
// listed twice, is a problem of its own.
func TestLoaderIndexesCheck(t *testing.T) {
	dir := t.TempDir()
	shards := webShards(t, dir)
	l := loaders.NewSet(daliloader.New(""), energonloader.New(""), widsloader.New("", true), ratarmountloader.New(""))
	if got := fmt.Sprint(l.Names()); got != "[dali energon wids ratarmount]" {
		t.Errorf("names %s", got)
	}
	l.Plan(shards)
	l.Plan(shards[:1]) // planned twice: indexed once
	outs, err := l.Outputs()
	if err != nil {
		t.Fatal(err)
	}
	wantOuts := []string{dali.IndexPath(shards[0]), dali.IndexPath(shards[1]),
		energon.IdxPath(shards[0]), energon.IdxPath(shards[1]), filepath.Join(dir, wids.DefaultName),
		ratarmount.IndexPath(shards[0]), ratarmount.IndexPath(shards[1])}
	for _, w := range wantOuts {
		found := false
		for _, o := range outs {
			found = found || o == w
		}
		if !found {
			t.Errorf("outputs %v lack %s", outs, w)
		}
	}
	if sf := l.ShardFiles(shards[:1]); len(sf) != 3 {
		t.Errorf("files of shard 0 alone: %v, want DALI's, energon's and ratarmount's", sf)
	}
	if _, err := fold.BuildIndex(context.Background(), shards, "", fold.IndexOptions{Workers: 2, Loaders: l}); err != nil {
		t.Fatal(err)
	}
	st, err := l.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Written["dali"] != 2 || st.Written["ratarmount"] != 2 || st.Written["wids"] != 1 || st.Written["energon"] != 2+4 {
		t.Errorf("written %v", st.Written)
	}

	indexes := map[string]string{
		dali.IndexPath(shards[1]):            "dali",
		energon.IdxPath(shards[1]):           "energon",
		filepath.Join(dir, energon.MetaDir):  "energon",
		filepath.Join(dir, wids.DefaultName): "wids",
		ratarmount.IndexPath(shards[1]):      "ratarmount",
	}
	// The entries as each loader counts them: the shard's own records (the
	// archive's end, its size) are not among them.
	wantEntries := map[string]int{
		dali.IndexPath(shards[1]):            2, // components
		energon.IdxPath(shards[1]):           1, // samples
		filepath.Join(dir, energon.MetaDir):  3, // samples
		filepath.Join(dir, wids.DefaultName): 2, // shards
		ratarmount.IndexPath(shards[1]):      2, // files
	}
	ctx := context.Background()
	for ix, loader := range indexes {
		if name, ok := loaders.Detect(ix); !ok || name != loader {
			t.Errorf("%s detected as %q %v, want %s", ix, name, ok, loader)
		}
		rep, err := loaders.Check(ctx, ix, nil, 2)
		if err != nil {
			t.Fatalf("%s: %v", ix, err)
		}
		if !rep.OK() || rep.Entries != wantEntries[ix] || rep.Loader != loader {
			t.Errorf("%s: fresh index: %d entries, problems %v", ix, rep.Entries, rep.Problems)
		}
		var text bytes.Buffer
		rep.WriteText(&text)
		if ix == energon.IdxPath(shards[1]) && !strings.Contains(text.String(), "energon index of 1 shard, 1 sample: OK\n") {
			t.Errorf("%s: text %q", ix, text.String())
		}
		if !strings.Contains(text.String(), ": OK\n") {
			t.Errorf("%s: text %q", ix, text.String())
		}
	}
	if _, ok := loaders.Detect(shards[0]); ok {
		t.Error("a tar shard detected as a loader's index")
	}
	if _, err := loaders.Check(ctx, shards[0], nil, 1); !errors.Is(err, loaders.ErrNotIndex) {
		t.Errorf("a tar shard checked as an index: %v", err)
	}

	// Shard 1 gains a sample at its end: every index of it is stale.
	testutil.WriteShard(t, shards[1], "s2.jpg", strings.Repeat("2", 700), "s2.cls", "2", "s3.jpg", "three", "s3.cls", "3")
	want := map[string]string{
		dali.IndexPath(shards[1]):            "missing s3.cls; missing s3.jpg",
		energon.IdxPath(shards[1]):           "missing sample at offset 2560; stale end of the archive",
		filepath.Join(dir, energon.MetaDir):  "missing s3",
		filepath.Join(dir, wids.DefaultName): "stale shard",
		ratarmount.IndexPath(shards[1]):      "missing s3.cls; missing s3.jpg; stale archive",
	}
	for ix, kinds := range want {
		rep, err := loaders.Check(ctx, ix, nil, 2)
		if err != nil {
			t.Fatalf("%s: %v", ix, err)
		}
		if got := problemKinds(rep); got != kinds {
			t.Errorf("%s: problems %q, want %q (%v)", filepath.Base(ix), got, kinds, rep.Problems)
		}
		var text bytes.Buffer
		rep.WriteText(&text)
		if !strings.Contains(text.String(), fmt.Sprintf("STALE: %d problems", len(rep.Problems))) || !strings.Contains(text.String(), rep.Problems[0].String()) {
			t.Errorf("%s: text %q", ix, text.String())
		}
	}

	// A shard listed twice, under another name of the same file; and a
	// shard gone.
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	alias := filepath.Join(dir, "sub") + "/../data-000.tar"
	rep, err := loaders.Check(ctx, dali.IndexPath(shards[0]), []string{shards[0], alias}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) == 0 || rep.Problems[0].Kind != loaders.Duplicate || !strings.Contains(rep.Problems[0].What, "after shard 0") {
		t.Errorf("a shard listed twice: %v", rep.Problems)
	}
	os.Remove(shards[0])
	rep, err = loaders.Check(ctx, filepath.Join(dir, energon.MetaDir), nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) == 0 || rep.Problems[0].Kind != loaders.ShardUnreadable || rep.Problems[0].Shard != shards[0] {
		t.Errorf("a shard gone: %v", rep.Problems)
	}
	if _, err := loaders.Check(ctx, dali.IndexPath(shards[0]), nil, 1); err == nil || !strings.Contains(err.Error(), "no tar shard beside it") {
		t.Errorf("a DALI index without its shard: %v", err)
	}
}

// TestLoaderIndexUnreadable: an index its loader could not read is a
// finding (loaders.Unreadable), not a failure of the check.
func TestLoaderIndexUnreadable(t *testing.T) {
	dir := t.TempDir()
	shards := webShards(t, dir)
	ix := filepath.Join(dir, wids.DefaultName)
	os.WriteFile(ix, []byte(`{"__kind__": "`+wids.Kind+`", "wids_version": 1, "shardlist": [{"url": 7}]}`), 0o644)
	if name, ok := loaders.Detect(ix); !ok || name != "wids" {
		t.Fatalf("detected %q %v", name, ok)
	}
	rep, err := loaders.Check(context.Background(), ix, shards, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) != 1 || rep.Problems[0].Kind != loaders.Unreadable || rep.OK() {
		t.Errorf("problems %v", rep.Problems)
	}
}

// TestLoaderOutputsClash: shards of the same name from two directories,
// indexed into one output directory, would overwrite each other's index:
// refused with loaders.ErrOutputClash naming both.
func TestLoaderOutputsClash(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"a", "b"} {
		os.Mkdir(filepath.Join(dir, d), 0o755)
	}
	out := t.TempDir()
	l := loaders.NewSet(daliloader.New(out))
	l.Plan([]string{filepath.Join(dir, "a", "x.tar"), filepath.Join(dir, "b", "x.tar")})
	_, err := l.Outputs()
	if !errors.Is(err, loaders.ErrOutputClash) || !strings.Contains(err.Error(), filepath.Join(out, "x.idx")) {
		t.Errorf("clash: %v", err)
	}
}

// TestDALIEmptyShard: DALI writes no index of a shard without a regular
// member; the shard is reported as not indexed, not as an error.
func TestDALIEmptyShard(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "empty.tar")
	testutil.WriteShard(t, shard)
	l := loaders.NewSet(daliloader.New(""))
	if _, err := fold.BuildIndex(context.Background(), []string{shard}, "", fold.IndexOptions{Loaders: l}); err != nil {
		t.Fatal(err)
	}
	st, err := l.Finish(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if st.Written["dali"] != 0 || len(st.None["dali"]) != 1 || !strings.Contains(st.None["dali"][0], shard) {
		t.Errorf("stats %+v", st)
	}
	if _, err := os.Stat(dali.IndexPath(shard)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an index of an empty shard: %v", err)
	}
}

// TestShardFilesAllOrNone: the loaders' files of each shard appear, synced
// together, once the pass over every shard is over (under thousands of
// them): a pass that fails on its last shard (cut short) leaves none of
// the good shards' files, nor any temporary file; the same pass without
// that shard writes them all.
func TestShardFilesAllOrNone(t *testing.T) {
	dir := t.TempDir()
	shards := webShards(t, dir)
	bad := filepath.Join(dir, "data-002.tar")
	testutil.WriteShard(t, bad, "s3.jpg", strings.Repeat("3", 5000), "s3.cls", "3")
	b, _ := os.ReadFile(bad)
	os.WriteFile(bad, b[:2048], 0o644) // the first payload cut short
	set := func() *loaders.Set {
		return loaders.NewSet(daliloader.New(""), energonloader.New(""), ratarmountloader.New(""))
	}
	entries := func() []string {
		es, _ := os.ReadDir(dir)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	if _, err := fold.BuildIndex(context.Background(), append(slices.Clone(shards), bad), "", fold.IndexOptions{Loaders: set(), Workers: 1}); err == nil {
		t.Fatal("a shard cut short was indexed")
	}
	if got := fmt.Sprint(entries()); got != "[data-000.tar data-001.tar data-002.tar]" {
		t.Fatalf("after the failed pass: %s", got)
	}
	if _, err := fold.BuildIndex(context.Background(), shards, "", fold.IndexOptions{Loaders: set(), Workers: 1}); err != nil {
		t.Fatal(err)
	}
	want := "[data-000.idx data-000.tar data-000.tar.idx data-000.tar.index.sqlite data-001.idx data-001.tar data-001.tar.idx data-001.tar.index.sqlite data-002.tar]"
	if got := fmt.Sprint(entries()); got != want {
		t.Fatalf("after the pass: %s\nwant %s", got, want)
	}
}
