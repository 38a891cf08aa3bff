package fold

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/shardset"
	"github.com/itarconv/itarconv/testing/testutil"
)

// wdsShards writes shards of WebDataset's naming, <prefix>-00000N<suffix>
// (gzipped for a ".tar.gz" suffix), in dir, and returns their paths and
// their plain bytes.
func wdsShards(t *testing.T, dir, prefix, suffix string, n int) ([]string, [][]byte) {
	t.Helper()
	var paths []string
	var plain [][]byte
	for i := range n {
		key := fmt.Sprintf("%s-s%02d", prefix, i)
		b := testutil.WriteShard(t, "", key+".jpg", "jpeg "+key, key+".cls", fmt.Sprint(i))
		p := filepath.Join(dir, fmt.Sprintf("%s-%06d%s", prefix, i, suffix))
		data := b
		if strings.HasSuffix(suffix, ".gz") {
			data = gzipBytes(b)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		paths, plain = append(paths, p), append(plain, b)
	}
	return paths, plain
}

// baseNames are the file names of paths.
func baseNames(paths []string) []string {
	var out []string
	for _, p := range paths {
		out = append(out, filepath.Base(p))
	}
	return out
}

// checkReadable opens every fold of dir through its indexes, as ls and
// verify do, and verifies it, payloads too; the directory's shards, as
// `itarconv index` groups them by name, are the same fold's.
func checkReadable(t *testing.T, dir, fold string, shards []string) {
	t.Helper()
	folds, err := OpenAllRows(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(folds) != 1 || folds[0].Name != fold || !slices.Equal(folds[0].Shards, shards) {
		t.Fatalf("the directory's folds: %d, the first %q of %v; want %s of %v", len(folds), folds[0].Name, folds[0].Shards, fold, shards)
	}
	rep, err := folds[0].Verify(context.Background(), VerifyOptions{Data: true})
	if err != nil || !rep.OK() || rep.Rows == 0 {
		t.Errorf("verify: %v, %d rows, problems %v", err, rep.Rows, rep.Problems)
	}
	found, err := shardset.Discover(dir)
	if err != nil || len(found) != 1 || found[0].Name != fold {
		t.Errorf("the directory's shards by name: %v %v, want one fold %s", found, err, fold)
	}
	if got, name, err := Shards([]string{dir}, ""); err != nil || name != fold || len(got) != len(shards) {
		t.Errorf("Shards of the directory: %v %q %v", got, name, err)
	}
}

// TestUnpackKeepsNames: shards decompressed one to one keep their names
// (imagenet-val-000000.tar.gz -> imagenet-val-000000.tar; a plain one
// among them as it is), the fold is named as `itarconv index` names it,
// imagenet-val.taridx, with a manifest; the fold reads, verifies, and is
// replaced as a fold of glzn's names is. A fold named keeps glzn's names.
func TestUnpackKeepsNames(t *testing.T) {
	in := t.TempDir()
	gz, plain := wdsShards(t, in, "imagenet-val", ".tar.gz", 2)
	p2 := testutil.WriteShard(t, filepath.Join(in, "imagenet-val-000002.tar"), "c.jpg", "jpeg c")
	shards := append(gz, filepath.Join(in, "imagenet-val-000002.tar"))
	plain = append(plain, p2)

	out := filepath.Join(t.TempDir(), "out")
	st, err := Unpack(context.Background(), shards, UnpackOptions{Dir: out, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"imagenet-val-000000.tar", "imagenet-val-000001.tar", "imagenet-val-000002.tar"}
	if got := baseNames(st.Shards); !slices.Equal(got, want) {
		t.Fatalf("shards %v, want %v", got, want)
	}
	for i, b := range plain {
		if got, _ := os.ReadFile(st.Shards[i]); !bytes.Equal(got, b) {
			t.Errorf("%s differs from its source, decompressed", st.Shards[i])
		}
	}
	idx := filepath.Join(out, "imagenet-val.taridx")
	if st.Index.Output != idx || st.FoldName() != "imagenet-val" {
		t.Errorf("index %s, fold %q", st.Index.Output, st.FoldName())
	}
	m, err := ReadManifest(idx)
	if err != nil || len(m.Shards) != 3 || m.Shards[2].Path != "imagenet-val-000002.tar" {
		t.Errorf("manifest %+v %v", m, err)
	}
	checkReadable(t, out, "imagenet-val", st.Shards)

	// A second run of fewer shards is refused for the shard it would
	// leave, named; replacing, it removes that shard.
	if _, err := Unpack(context.Background(), gz, UnpackOptions{Dir: out}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "imagenet-val-000002.tar") {
		t.Errorf("a second run: %v, want ErrExists naming imagenet-val-000002.tar", err)
	}
	st, err = Unpack(context.Background(), gz, UnpackOptions{Dir: out, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := baseNames(st.Replaced); !slices.Equal(got, want[2:]) {
		t.Errorf("replaced %v", got)
	}
	checkReadable(t, out, "imagenet-val", st.Shards)

	// A fold named: glzn's names.
	named := t.TempDir()
	st, err = Unpack(context.Background(), gz, UnpackOptions{Dir: named, Fold: "val"})
	if err != nil {
		t.Fatal(err)
	}
	if got := baseNames(st.Shards); !slices.Equal(got, []string{"val_0000.tar", "val_0001.tar"}) || st.FoldName() != "val" {
		t.Errorf("with a fold named: %v, fold %s", got, st.FoldName())
	}
	if _, err := os.Stat(ManifestPath(filepath.Join(named, "val.taridx"))); err == nil {
		t.Error("glzn's names beside the index got a manifest")
	}
}

// TestUnpackNameClash: two shards that would keep one name are refused
// before anything is written, both named; a fold named, or a pattern,
// writes them.
func TestUnpackNameClash(t *testing.T) {
	in := t.TempDir()
	var shards []string
	for _, d := range []string{"a", "b"} {
		os.Mkdir(filepath.Join(in, d), 0o755)
		p := filepath.Join(in, d, "x-000000.tar.gz")
		os.WriteFile(p, gzipBytes(testutil.WriteShard(t, "", d+".jpg", d)), 0o644)
		shards = append(shards, p)
	}
	out := filepath.Join(t.TempDir(), "out")
	_, err := Unpack(context.Background(), shards, UnpackOptions{Dir: out})
	if !errors.Is(err, ErrNameClash) || !strings.Contains(err.Error(), shards[0]) || !strings.Contains(err.Error(), shards[1]) ||
		!strings.Contains(err.Error(), "x-000000.tar") {
		t.Errorf("%v, want ErrNameClash naming both shards", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the refused run made its output directory")
	}
	c := registry.Conversion{From: "tar", To: "tar", Srcs: shards, Values: registry.Values{}}
	if err := checkOptions(c); !errors.Is(err, ErrNameClash) {
		t.Errorf("the format's check of the options: %v, want ErrNameClash", err)
	}
	c.Values["fold"] = "x"
	if err := checkOptions(c); err != nil {
		t.Errorf("with --fold: %v", err)
	}
	st, err := Unpack(context.Background(), shards, UnpackOptions{Dir: out, Name: "x-%06d.tar"})
	if err != nil {
		t.Fatal(err)
	}
	if got := baseNames(st.Shards); !slices.Equal(got, []string{"x-000000.tar", "x-000001.tar"}) || st.FoldName() != "x" {
		t.Errorf("with a pattern: %v, fold %s", got, st.FoldName())
	}
	checkReadable(t, out, "x", st.Shards)
}

// TestUnpackNamingFallsBack: names that give several folds, or none
// (standard input), are not kept: glzn's train_NNNN.tar, with a note for
// the names that could have been.
func TestUnpackNamingFallsBack(t *testing.T) {
	in := t.TempDir()
	train, _ := wdsShards(t, in, "imagenet-train", ".tar.gz", 1)
	val, _ := wdsShards(t, in, "imagenet-val", ".tar.gz", 1)
	shards := append(train, val...)
	n, err := UnpackNaming(shards, UnpackOptions{Dir: t.TempDir()})
	if err != nil || n.Kept || n.Fold != "train" || !slices.Equal(n.Names, []string{"train_0000.tar", "train_0001.tar"}) ||
		!strings.Contains(n.Note, "2 folds (imagenet-train, imagenet-val)") {
		t.Errorf("two folds' names: %+v %v", n, err)
	}
	n, err = UnpackNaming([]string{"-"}, UnpackOptions{Dir: t.TempDir()})
	if err != nil || n.Kept || !slices.Equal(n.Names, []string{"train_0000.tar"}) || n.Note != "" {
		t.Errorf("standard input: %+v %v", n, err)
	}
	// A URL keeps the last element of its path, without the query.
	n, err = UnpackNaming([]string{"https://example.org/d/shard-000007.tar.gz?x=1"}, UnpackOptions{Dir: t.TempDir()})
	if err != nil || !n.Kept || n.Fold != "shard" || !slices.Equal(n.Names, []string{"shard-000007.tar"}) {
		t.Errorf("a URL: %+v %v", n, err)
	}
}

// TestPatternFold: a pattern's fold is its prefix without trailing
// separators, as shardset names a fold of its names; a pattern whose
// names shardset would not take as one fold is refused.
func TestPatternFold(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	for p, want := range map[string]string{
		"imagenet-val-%06d.tar": "imagenet-val",
		"imagenet.val.%d.tar":   "imagenet.val",
		"shard%05d.tar":         "shard",
		"a_%d.tar":              "a",
		"%06d.tar":              "out",
	} {
		if got, err := PatternFold(dir, p); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", p, got, err, want)
		}
	}
	for _, p := range []string{"a-%d-x.tar", "a-%d_x.tar", "a-%s.tar", "d/a-%d.tar"} {
		if _, err := PatternFold(dir, p); !errors.Is(err, tarfile.ErrNamePattern) {
			t.Errorf("%q: %v, want ErrNamePattern", p, err)
		}
	}
}

// TestWriteNamePattern: new shards named by a pattern, with the fold and
// its index after its prefix and a manifest; the fold reads and verifies;
// a partitioned run merged writes a fold of the same names, members and
// rows, which reads and verifies as well.
func TestWriteNamePattern(t *testing.T) {
	ctx := context.Background()
	src := mixedShards(t, 30, 20)
	out := t.TempDir()
	opts := WriteOptions{Dir: out, Name: "imagenet-val-%06d.tar", ShardSize: 8 << 10, Workers: 2}
	st, err := Write(ctx, NewTarShards(src, tarfile.Options{}), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Shards) < 3 {
		t.Fatalf("%d shards: no rollover to test", len(st.Shards))
	}
	for i, s := range st.Shards {
		if want := fmt.Sprintf("imagenet-val-%06d.tar", i); filepath.Base(s) != want {
			t.Errorf("shard %d: %s, want %s", i, filepath.Base(s), want)
		}
	}
	if st.FoldName() != "imagenet-val" {
		t.Errorf("fold %q", st.FoldName())
	}
	if _, err := ReadManifest(filepath.Join(out, "imagenet-val.taridx")); err != nil {
		t.Error(err)
	}
	checkReadable(t, out, "imagenet-val", st.Shards)
	wantMembers, wantRows, _ := foldMembers(t, st.Shards, filepath.Join(out, "imagenet-val.taridx"))
	readFold(t, out)

	// The same fold from two tasks' parts.
	all := NewTarShards(src, tarfile.Options{})
	var parts []string
	for k := range 2 {
		lo, hi := partition.Range(dataset.ShardSizes(all), partition.Task{K: k, N: 2})
		part, err := dataset.Slice(all, lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		if _, err := WritePart(ctx, part, dir, WriteOptions{Workers: 1, ShardSize: opts.ShardSize}); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, dir)
	}
	merged, _, err := MergeParts(ctx, parts, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range merged.Shards {
		if want := fmt.Sprintf("imagenet-val-%06d.tar", i); filepath.Base(s) != want {
			t.Errorf("merged shard %d: %s, want %s", i, filepath.Base(s), want)
		}
	}
	if _, err := ReadManifest(filepath.Join(out, "imagenet-val.taridx")); err != nil {
		t.Error(err)
	}
	checkReadable(t, out, "imagenet-val", merged.Shards)
	gotMembers, gotRows, _ := foldMembers(t, merged.Shards, filepath.Join(out, "imagenet-val.taridx"))
	if !slices.Equal(gotMembers, wantMembers) || !slices.Equal(gotRows, wantRows) {
		t.Errorf("merged: %d members, %d rows; one run %d, %d, or not the same", len(gotMembers), len(gotRows), len(wantMembers), len(wantRows))
	}
	readFold(t, out)

	// A bad pattern is refused before anything is written.
	if _, err := Write(ctx, NewTarShards(src, tarfile.Options{}), WriteOptions{Dir: filepath.Join(out, "new"), Name: "x-%d-y.tar"}); !errors.Is(err, tarfile.ErrNamePattern) {
		t.Errorf("a bad pattern: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, "new")); err == nil {
		t.Error("a refused pattern made the output directory")
	}
}

// TestOutputsOfKeptNames: what a conversion would replace, with names
// kept or from a pattern, is the fold's index and its shards by name, and
// nothing of other folds.
func TestOutputsOfKeptNames(t *testing.T) {
	in := t.TempDir()
	gz, _ := wdsShards(t, in, "imagenet-val", ".tar.gz", 2)
	dir := t.TempDir()
	touch(t, dir, "imagenet-val.taridx", "imagenet-val-000000.tar", "imagenet-val-000009.tar", "imagenet-train-000000.tar", "train_0000.tar", "train.taridx")
	j := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	kept := outputs(dir, registry.Conversion{From: "tar", To: "tar", Srcs: gz, Values: registry.Values{}})
	if want := j("imagenet-val-000000.tar", "imagenet-val-000009.tar", "imagenet-val.taridx"); !slices.Equal(sorted(kept.Replaced), want) {
		t.Errorf("kept names: %q, want %q", kept.Replaced, want)
	}
	pattern := outputs(dir, registry.Conversion{From: "barecat", To: "tar", Values: registry.Values{"name": "imagenet-train-%06d.tar"}})
	if want := j("imagenet-train-000000.tar"); !slices.Equal(pattern.Replaced, want) {
		t.Errorf("a pattern: %q, want %q", pattern.Replaced, want)
	}
	glzn := outputs(dir, registry.Conversion{From: "tar", To: "tar", Srcs: gz, Values: registry.Values{"fold": "train"}})
	if want := j("train.taridx", "train_0000.tar"); !slices.Equal(glzn.Replaced, want) {
		t.Errorf("a fold named: %q, want %q", glzn.Replaced, want)
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestUnpackGLZNNamesOutOfOrder: names of glzn's form keep their fold,
// but glzn, which orders shards by the string of their suffix, would read
// x_9.tar after x_10.tar: such shards are numbered as glzn orders them.
func TestUnpackGLZNNamesOutOfOrder(t *testing.T) {
	n, err := UnpackNaming([]string{"/d/x_9.tar.gz", "/d/x_10.tar.gz"}, UnpackOptions{Dir: t.TempDir()})
	if err != nil || n.Kept || n.Fold != "x" || !slices.Equal(n.Names, []string{"x_0000.tar", "x_0001.tar"}) {
		t.Errorf("out of glzn's order: %+v %v", n, err)
	}
	n, err = UnpackNaming([]string{"/d/x_09.tar.gz", "/d/x_10.tar.gz"}, UnpackOptions{Dir: t.TempDir()})
	if err != nil || !n.Kept || n.Fold != "x" || !slices.Equal(n.Names, []string{"x_09.tar", "x_10.tar"}) {
		t.Errorf("in glzn's order: %+v %v", n, err)
	}
}
