package fold

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/itarconv/itarconv/formats/registry"
)

// touch makes empty files in dir.
func touch(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestInputsAreShards: a directory's inputs are its tar shards (plain or
// compressed), not its other files nor a directory named like a shard; a
// file, or a path that cannot be listed, is its own input.
func TestInputsAreShards(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "a_0.tar", "a_1.tar.gz", "notes.txt", "a.taridx")
	os.Mkdir(filepath.Join(dir, "b_0.tar"), 0o755)
	got := inputs(dir)
	want := []string{filepath.Join(dir, "a_0.tar"), filepath.Join(dir, "a_1.tar.gz")}
	if !slices.Equal(got, want) {
		t.Errorf("inputs(dir) = %q, want %q", got, want)
	}
	file := filepath.Join(dir, "a_0.tar")
	if got := inputs(file); !slices.Equal(got, []string{file}) {
		t.Errorf("inputs(file) = %q", got)
	}
	missing := filepath.Join(dir, "nope")
	if got := inputs(missing); !slices.Equal(got, []string{missing}) {
		t.Errorf("inputs(missing) = %q", got)
	}
}

// TestOutputsOfAFold: a conversion into a directory replaces the fold's
// index and its shards, only that fold's (a fold name with pattern
// characters is taken literally); with --reuse-tars it rebuilds the index
// alone; from SCDL it writes the cells and metadata folds, or the archive
// fold.
func TestOutputsOfAFold(t *testing.T) {
	dir := t.TempDir()
	touch(t, dir, "train.taridx", "train_0.tar", "train_1.tar", "other_0.tar",
		"x[1]_0.tar", "x1_0.tar", "cells_0.tar", "scdlmeta.taridx", "scdl_0.tar")
	j := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	for _, c := range []struct {
		name              string
		conv              registry.Conversion
		replaced, rebuilt []string
	}{
		{"default fold", registry.Conversion{From: "barecat", Values: registry.Values{}},
			j("train.taridx", "train_0.tar", "train_1.tar"), nil},
		{"literal fold name", registry.Conversion{From: "barecat", Values: registry.Values{"fold": "x[1]"}},
			j("x[1]_0.tar"), nil},
		{"reuse-tars", registry.Conversion{From: "barecat", Values: registry.Values{"reuse-tars": "true"}},
			nil, j("train.taridx")},
		{"reuse-tars, no index yet", registry.Conversion{From: "barecat", Values: registry.Values{"reuse-tars": "true", "fold": "other"}},
			nil, nil},
		{"scdl cells", registry.Conversion{From: "scdl", Values: registry.Values{}},
			j("cells_0.tar", "scdlmeta.taridx"), nil},
		{"scdl archive", registry.Conversion{From: "scdl", Values: registry.Values{"scdl-mode": "archive"}},
			j("scdl_0.tar"), nil},
	} {
		o := outputs(dir, c.conv)
		if !slices.Equal(o.Replaced, c.replaced) || !slices.Equal(o.Rebuilt, c.rebuilt) {
			t.Errorf("%s: replaced %q, rebuilt %q; want %q, %q", c.name, o.Replaced, o.Rebuilt, c.replaced, c.rebuilt)
		}
	}
}

// TestRecodes: tar shards into tar shards is a conversion only when some
// shard is compressed or the target is a stream; plain tars into a fold is
// nothing to do.
func TestRecodes(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain")
	gz := filepath.Join(dir, "gz")
	os.Mkdir(plain, 0o755)
	os.Mkdir(gz, 0o755)
	writeTarFile(t, filepath.Join(plain, "data_0.tar"), [][2]string{{"a/1.txt", "one"}})
	tarBytes, err := os.ReadFile(filepath.Join(plain, "data_0.tar"))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(tarBytes)
	zw.Close()
	if err := os.WriteFile(filepath.Join(gz, "data_0.tar.gz"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	for _, c := range []struct {
		srcs []string
		dst  string
		want bool
	}{
		{[]string{plain}, out, false},
		{[]string{plain}, "-", true},
		{[]string{gz}, out, true},
		{[]string{filepath.Join(dir, "missing")}, out, true}, // refused by the conversion, naming the path
	} {
		conv := registry.Conversion{From: "tar", To: "tar", Srcs: c.srcs, Values: registry.Values{}}
		if got := recodes(conv, c.dst); got != c.want {
			t.Errorf("recodes(%q, %q) = %v, want %v", c.srcs, c.dst, got, c.want)
		}
	}
	// New shards of a size: plain shards are written anew.
	conv := registry.Conversion{From: "tar", To: "tar", Srcs: []string{plain}, Values: registry.Values{"shard-size": "1MiB"}}
	if !recodes(conv, out) {
		t.Errorf("recodes(plain, --shard-size) = false")
	}
}

// TestProblemString: a problem reads with its shard and fid, and its row
// and offset where it has them.
func TestProblemString(t *testing.T) {
	for _, c := range []struct {
		p    Problem
		want string
	}{
		{Problem{Kind: ProblemExtraMember, Shard: "s_0.tar", Fid: 2, Row: -1, Offset: 1536, What: "not indexed"},
			"s_0.tar (fid 2) offset 1536: not indexed"},
		{Problem{Kind: ProblemShard, Shard: "s_1.tar", Fid: 1, Row: -1, What: "truncated"},
			"s_1.tar (fid 1): truncated"},
		{Problem{Kind: ProblemRow, Shard: "s_0.tar", Fid: 0, Row: 7, Offset: 512, What: "no header"},
			"s_0.tar (fid 0) row 7, offset 512: no header"},
	} {
		if got := c.p.String(); got != c.want {
			t.Errorf("String() = %q, want %q", got, c.want)
		}
	}
}
