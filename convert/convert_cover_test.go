package convert

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/partition"
)

// coverTar writes a tar shard of the given files (name, body), in order,
// and returns its bytes.
func coverTar(t *testing.T, path string, files ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	when := time.Unix(1700000000, 0)
	for i := 0; i < len(files); i += 2 {
		h := &tar.Header{Name: files[i], Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[i+1])), ModTime: when, Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[i+1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if path != "" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// coverFold writes a fold "train" of n shards of three files each in a new
// directory, and returns the directory and the files by name.
func coverFold(t *testing.T, n int) (string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	want := map[string]string{}
	for s := range n {
		var files []string
		for i := range 3 {
			name := fmt.Sprintf("s%02d/sample%d.txt", s, i)
			body := strings.Repeat(fmt.Sprintf("%d.%d;", s, i), 50*(i+1))
			files = append(files, name, body)
			want[name] = body
		}
		coverTar(t, filepath.Join(dir, fmt.Sprintf("train_%04d.tar", s)), files...)
	}
	return dir, want
}

// coverRead opens a dataset through its format and returns its regular
// entries' contents by name (directories, size 0 entries ending in "/",
// left out).
func coverRead(t *testing.T, format string, paths ...string) map[string]string {
	t.Helper()
	d, err := registry.Lookup(format).Open(paths, registry.OpenOptions{})
	if err != nil {
		t.Fatalf("open %s %v: %v", format, paths, err)
	}
	defer d.Close()
	got := map[string]string{}
	err = d.List(context.Background(), func(e registry.Entry) error {
		if strings.HasSuffix(e.Name, "/") {
			return nil
		}
		b, err := d.ReadEntry(e.Name)
		got[strings.TrimPrefix(e.Name, "./")] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("list %s %v: %v", format, paths, err)
	}
	return got
}

func sameFiles(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d files, want %d (%v)", what, len(got), len(want), keys(got))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %s is %d bytes %.20q, want %d bytes %.20q", what, k, len(got[k]), got[k], len(v), v)
		}
	}
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// partitioned runs a conversion as n tasks and their merge.
func partitioned(t *testing.T, srcs []string, dst string, o ConvertOptions, n int) (*registry.Result, [][2]int) {
	t.Helper()
	ctx := context.Background()
	var parts []string
	var ranges [][2]int
	for k := range n {
		dir := filepath.Join(t.TempDir(), fmt.Sprint("part", k))
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		lo, hi, _, err := ConvertPart(ctx, srcs, dst, o, partition.Task{K: k, N: n}, dir)
		if err != nil {
			t.Fatalf("task %d/%d: %v", k, n, err)
		}
		parts = append(parts, dir)
		ranges = append(ranges, [2]int{lo, hi})
	}
	res, err := MergeConverted(ctx, srcs, dst, o, parts)
	if err != nil {
		t.Fatalf("merge: %v", err)
	}
	return res, ranges
}

// TestPartitionedConvertMatchesOneRun: tar shards converted as tasks of a
// partitioned run and merged give what one run gives: the same TBL bytes,
// the same Barecat files, the same members in a resharded fold. The tasks
// take every shard once, in order.
func TestPartitionedConvertMatchesOneRun(t *testing.T) {
	src, want := coverFold(t, 5)
	srcs := []string{src}
	ctx := context.Background()
	out := t.TempDir()

	// TBL: byte for byte.
	one := filepath.Join(out, "one.tbl")
	if _, err := Convert(ctx, srcs, one, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	merged := filepath.Join(out, "merged.tbl")
	res, ranges := partitioned(t, srcs, merged, ConvertOptions{}, 3)
	// Plain local shards: the tasks wrote their samples in place; the
	// merge copied none.
	if ms, ok := res.Stats.(*registry.MergedStats).Merge.(*tbl.MergeStats); !ok || ms.BytesCopied != 0 {
		t.Errorf("merge of TBL parts written in place: %+v, want no byte copied", res.Stats)
	}
	if fmt.Sprint(ranges[0][0], ranges[len(ranges)-1][1]) != "0 5" || ranges[0][1] != ranges[1][0] || ranges[1][1] != ranges[2][0] {
		t.Errorf("task ranges %v do not cover shards 0 to 5 once, in order", ranges)
	}
	a, _ := os.ReadFile(one)
	b, _ := os.ReadFile(merged)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("merged TBL (%d bytes) differs from one run's (%d bytes)", len(b), len(a))
	}
	sameFiles(t, "merged TBL", coverRead(t, "tbl", merged), want)
	// Merging again over an existing output: refused, unless asked.
	if _, err := MergeConverted(ctx, srcs, merged, ConvertOptions{}, nil); !errors.Is(err, fs.ErrExist) {
		t.Errorf("merge over an existing TBL: %v, want fs.ErrExist", err)
	}

	// Barecat: the same files, readable and checked.
	bc := filepath.Join(out, "merged.barecat")
	res, _ = partitioned(t, srcs, bc, ConvertOptions{To: "barecat"}, 2)
	if res == nil || res.Summary == "" {
		t.Errorf("merge result %+v", res)
	}
	sameFiles(t, "merged Barecat", coverRead(t, "barecat", bc), want)

	// Tar shards written anew into shards of a size.
	fold := filepath.Join(out, "fold")
	partitioned(t, srcs, fold, ConvertOptions{To: "tar", ShardSize: 4096}, 2)
	sameFiles(t, "merged fold", coverRead(t, "tar", fold), want)

	// From a Barecat archive to a TBL file (through the registry's parts).
	tb := filepath.Join(out, "fromcat.tbl")
	partitioned(t, []string{bc}, tb, ConvertOptions{}, 2)
	sameFiles(t, "TBL from Barecat by parts", coverRead(t, "tbl", tb), want)
}

// coverGzipShard writes a gzip-compressed tar shard of one member.
func coverGzipShard(t *testing.T) string {
	gz := filepath.Join(t.TempDir(), "a.tar.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(coverTar(t, "", "a.txt", "a"))
	zw.Close()
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return gz
}

// TestPartitionRefused: conversions that cannot run as tasks say so, with
// ErrNoPartition, before anything is written.
func TestPartitionRefused(t *testing.T) {
	src, _ := coverFold(t, 2)
	gz := coverGzipShard(t)
	out := t.TempDir()
	cases := []struct {
		name string
		srcs []string
		dst  string
		o    ConvertOptions
		msg  string
	}{
		{"stream", []string{src}, Stream, ConvertOptions{}, "a tar stream on standard output"},
		{"wrap", []string{src}, filepath.Join(out, "x.barecat"), ConvertOptions{Target: barecat.CreateOptions{Wrap: true}}, "--wrap"},
		{"tar to tar", []string{gz}, filepath.Join(out, "fold"), ConvertOptions{To: "tar"}, "give --shard-size"},
		{"reuse tars", []string{filepath.Join(out, "x.barecat")}, filepath.Join(out, "fold"), ConvertOptions{From: "barecat", To: "tar", Source: barecat.OpenOptions{ReuseTars: true}}, "--reuse-tars"},
		{"to scdl", []string{src}, filepath.Join(out, "x.scdl"), ConvertOptions{To: "scdl"}, "SCDL"},
	}
	for _, c := range cases {
		dir := t.TempDir()
		_, _, _, err := ConvertPart(context.Background(), c.srcs, c.dst, c.o, partition.Task{K: 0, N: 2}, dir)
		if !errors.Is(err, ErrNoPartition) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: part: %v, want ErrNoPartition saying %q", c.name, err, c.msg)
		}
		if _, err := MergeConverted(context.Background(), c.srcs, c.dst, c.o, []string{dir}); !errors.Is(err, ErrNoPartition) {
			t.Errorf("%s: merge: %v, want ErrNoPartition", c.name, err)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: the part directory holds %d entries", c.name, len(left))
		}
	}
	if _, _, _, err := ConvertPart(context.Background(), []string{src}, "x", ConvertOptions{To: "nosuch"}, partition.Task{N: 1}, t.TempDir()); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("an unknown format: %v, want ErrUnknownFormat", err)
	}
	if _, err := MergeConverted(context.Background(), []string{src}, "x", ConvertOptions{From: "nosuch"}, nil); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("merge from an unknown format: %v, want ErrUnknownFormat", err)
	}
}

// TestConvertInputs: a partitioned run's manifest records tar shards one
// by one (a fold's directory as its shards, in order), and other sources'
// paths as given.
func TestConvertInputs(t *testing.T) {
	src, _ := coverFold(t, 3)
	got, err := ConvertInputs([]string{src}, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, filepath.Base(p))
	}
	if fmt.Sprint(names) != "[train_0000.tar train_0001.tar train_0002.tar]" {
		t.Errorf("inputs %v", names)
	}
	bc := filepath.Join(t.TempDir(), "a.barecat")
	if _, err := Convert(context.Background(), []string{src}, bc, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, err := ConvertInputs([]string{bc}, ConvertOptions{}); err != nil || len(got) != 1 || got[0] != bc {
		t.Errorf("a Barecat archive's inputs: %v, %v", got, err)
	}
	if _, err := ConvertInputs([]string{src}, ConvertOptions{From: "nosuch"}); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("an unknown format: %v", err)
	}
	if _, err := ConvertInputs([]string{filepath.Join(src, "nosuch")}, ConvertOptions{From: "tar"}); err == nil {
		t.Error("a missing fold has inputs")
	}
	// Shards given as files come with their stats, which the manifest
	// takes; a directory's come without.
	files, _ := ConvertInputs([]string{src}, ConvertOptions{})
	f, err := FindShards(files, ConvertOptions{})
	if err != nil || !slices.Equal(f.Shards, files) || len(f.Infos) != len(files) {
		t.Fatalf("FindShards: %+v, %v", f, err)
	}
	infos := f.Infos
	for i, fi := range infos {
		if st, _ := os.Stat(files[i]); fi == nil || !os.SameFile(fi, st) || fi.Size() != st.Size() {
			t.Errorf("%s: stat %v, want %v", files[i], fi, st)
		}
	}
	if f, _ := FindShards([]string{src}, ConvertOptions{}); f == nil || f.Infos != nil {
		t.Errorf("a directory's shards came with stats: %+v", f)
	}
	// The stats a caller made are taken, not made again: the guard's, of
	// thousands of shards.
	known := slices.Clone(infos)
	known[1] = infos[0] // a stat no os.Stat would give for files[1]
	if f, err := FindShardsKnown(files, known, ConvertOptions{}); err != nil || !slices.Equal(f.Shards, files) || f.Infos[1] != infos[0] || f.Infos[0] != infos[0] {
		t.Errorf("FindShardsKnown: %+v, %v; want the shards with the stats given", f, err)
	}
	// What a caller found is taken as found: a task's share is of the
	// shards it says, not found again.
	found := &FoundShards{Srcs: files, Shards: files[:2]}
	dir := t.TempDir()
	lo, hi, _, err := ConvertPart(context.Background(), files, filepath.Join(t.TempDir(), "x.tbl"), ConvertOptions{Found: found}, partition.Task{K: 0, N: 1}, dir)
	if err != nil || lo != 0 || hi != 2 {
		t.Errorf("a task over the shards found: shards %d to %d, %v; want 0 to 2", lo, hi, err)
	}
}

// TestConvertTarToTar: compressed shards decompress into an indexed fold
// of the same members; plain shards are refused as the same format with
// nothing to convert.
func TestConvertTarToTar(t *testing.T) {
	dir := t.TempDir()
	plain := coverTar(t, filepath.Join(dir, "plain.tar"), "a.txt", "alpha", "b.bin", "beta!")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	zw.Close()
	gz := filepath.Join(dir, "train_0000.tar.gz")
	os.WriteFile(gz, buf.Bytes(), 0o644)

	out := filepath.Join(t.TempDir(), "out")
	res, err := Convert(context.Background(), []string{gz}, out, ConvertOptions{To: "tar"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "1 shards decompressed as they are") || !strings.Contains(res.Summary, "(2 members)") {
		t.Errorf("summary %q", res.Summary)
	}
	shards, _ := filepath.Glob(filepath.Join(out, "train*.tar"))
	if len(shards) != 1 {
		t.Fatalf("shards %v", shards)
	}
	if b, _ := os.ReadFile(shards[0]); !bytes.Equal(b, plain) {
		t.Errorf("the decompressed shard differs from the plain tar (%d bytes, want %d)", len(b), len(plain))
	}
	if _, err := os.Stat(filepath.Join(out, "train.taridx")); err != nil {
		t.Errorf("no index: %v", err)
	}
	sameFiles(t, "decompressed fold", coverRead(t, "tar", out), map[string]string{"a.txt": "alpha", "b.bin": "beta!"})
	// Again, without Overwrite: the fold is there.
	if _, err := Convert(context.Background(), []string{gz}, out, ConvertOptions{To: "tar"}); err == nil {
		t.Error("a second conversion replaced the fold without Overwrite")
	}

	_, err = Convert(context.Background(), []string{filepath.Join(dir, "plain.tar")}, filepath.Join(t.TempDir(), "o"), ConvertOptions{To: "tar"})
	if !errors.Is(err, ErrSameFormat) || !errors.Is(err, ErrNothingToConvert) {
		t.Errorf("plain shards: %v, want ErrSameFormat and ErrNothingToConvert", err)
	}
	if _, err := Convert(context.Background(), []string{filepath.Join(dir, "nosuch")}, filepath.Join(t.TempDir(), "o"), ConvertOptions{To: "tar"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing shard: %v, want fs.ErrNotExist", err)
	}
}

// TestConvertFormatsErrors: unknown formats, the same format, and a
// source no format can read are refused with their sentinels.
func TestConvertFormatsErrors(t *testing.T) {
	src, _ := coverFold(t, 1)
	out := t.TempDir()
	if _, err := Convert(context.Background(), []string{src}, filepath.Join(out, "x"), ConvertOptions{To: "nosuch"}); !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), `"nosuch"`) {
		t.Errorf("unknown target: %v", err)
	}
	tb := filepath.Join(out, "a.tbl")
	if _, err := Convert(context.Background(), []string{src}, tb, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Convert(context.Background(), []string{tb}, filepath.Join(out, "b.tbl"), ConvertOptions{}); !errors.Is(err, ErrSameFormat) {
		t.Errorf("TBL to TBL: %v, want ErrSameFormat", err)
	}
	from, to, err := Formats([]string{tb}, filepath.Join(out, "c.barecat"), "", "")
	if err != nil || from != "tbl" || to != "barecat" {
		t.Errorf("Formats: %s to %s, %v", from, to, err)
	}
	from, to, _ = Formats([]string{src, src}, filepath.Join(out, "dir"), "", "")
	if from != "tar" || to != "tar" {
		t.Errorf("Formats of several paths to a directory: %s to %s", from, to)
	}
}

// TestConvertBarecatReuseTars: a wrapped Barecat archive converts to tar as
// an index over the tar files its shards link to, and the fold reads the
// same files.
func TestConvertBarecatReuseTars(t *testing.T) {
	src, want := coverFold(t, 2)
	dir := t.TempDir()
	bc := filepath.Join(dir, "w.barecat")
	if _, err := Convert(context.Background(), []string{src}, bc, ConvertOptions{Target: barecat.CreateOptions{Wrap: true}}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "reused")
	res, err := Convert(context.Background(), []string{bc}, out, ConvertOptions{To: "tar", Source: barecat.OpenOptions{ReuseTars: true}, Target: fold.CreateOptions{Fold: "val"}})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats.(map[string]any)
	if fmt.Sprint(st["rows"], st["files_checked"], len(st["shards"].([]string))) != "6 6 2" || st["index"] != filepath.Join(out, "val.taridx") {
		t.Errorf("stats %v", st)
	}
	if !strings.Contains(res.Summary, "6 files checked") {
		t.Errorf("summary %q", res.Summary)
	}
	if _, err := Convert(context.Background(), []string{bc, src}, out, ConvertOptions{From: "barecat", To: "tar", Source: barecat.OpenOptions{ReuseTars: true}}); err == nil || !strings.Contains(err.Error(), "not 2") {
		t.Errorf("two archives: %v", err)
	}
	// Without ReuseTars, the files are copied into a fold of their own.
	copied := filepath.Join(dir, "copied")
	if _, err := Convert(context.Background(), []string{bc}, copied, ConvertOptions{To: "tar"}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, "Barecat to tar", coverRead(t, "tar", copied), want)
}

// TestConvertTBLv1ToSCDL: a TBL file without names cannot rebuild an SCDL
// archive: refused with ErrNoNames before anything is written.
func TestConvertTBLv1ToSCDL(t *testing.T) {
	src, _ := coverFold(t, 1)
	dir := t.TempDir()
	v1 := filepath.Join(dir, "v1.tbl")
	if _, err := Convert(context.Background(), []string{src}, v1, ConvertOptions{Target: tbl.RowsOptions{Version: 1}}); err != nil {
		t.Fatal(err)
	}
	r, err := tbl.Open(v1)
	if err != nil {
		t.Fatal(err)
	}
	if r.Version() != 1 {
		t.Fatalf("version %d", r.Version())
	}
	r.Close()
	out := filepath.Join(dir, "x.scdl")
	if _, err := Convert(context.Background(), []string{v1}, out, ConvertOptions{To: "scdl"}); !errors.Is(err, ErrNoNames) || !strings.Contains(err.Error(), v1) {
		t.Errorf("TBL v1 to SCDL: %v, want ErrNoNames naming the file", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an output was left: %v", err)
	}
	if _, err := Convert(context.Background(), []string{filepath.Join(dir, "nosuch.tbl")}, out, ConvertOptions{From: "tbl", To: "scdl"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing TBL: %v", err)
	}
}

// TestConvertSCDLPairs: an SCDL archive converts to its two folds and back
// through Convert, with the pairs' checks on their paths.
func TestConvertSCDLPairs(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "a.scdl")
	cells := writeSynthSCDLCover(t, archive)
	folds := filepath.Join(dir, "folds")
	res, err := Convert(context.Background(), []string{archive}, folds, ConvertOptions{To: "tar"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, fmt.Sprintf("%d cells", cells)) {
		t.Errorf("summary %q, want %d cells", res.Summary, cells)
	}
	back := filepath.Join(dir, "back.scdl")
	res, err = Convert(context.Background(), []string{folds}, back, ConvertOptions{To: "scdl"})
	if err != nil {
		t.Fatal(err)
	}
	st := res.Stats.(*SCDLImportStats)
	if st.Cells != cells || st.Output != back {
		t.Errorf("stats %+v, want %d cells into %s", st, cells, back)
	}
	// Archive mode: the archive's own files, as they are.
	files := filepath.Join(dir, "files")
	res, err = Convert(context.Background(), []string{archive}, files, ConvertOptions{To: "tar", Mode: scdl.ModeArchive})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "files") || !strings.Contains(res.Summary, SCDLArchiveFold) {
		t.Errorf("archive mode summary %q", res.Summary)
	}

	if _, err := Convert(context.Background(), []string{archive, archive}, filepath.Join(dir, "x"), ConvertOptions{From: "scdl", To: "tar"}); err == nil || !strings.Contains(err.Error(), "not 2 paths") {
		t.Errorf("two SCDL paths: %v", err)
	}
	if _, err := Convert(context.Background(), []string{folds, folds}, filepath.Join(dir, "y.scdl"), ConvertOptions{From: "tar", To: "scdl"}); err == nil || !strings.Contains(err.Error(), "not 2 paths") {
		t.Errorf("two fold directories: %v", err)
	}
	shard, _ := filepath.Glob(filepath.Join(folds, "*.tar"))
	if _, err := Convert(context.Background(), shard[:1], filepath.Join(dir, "z.scdl"), ConvertOptions{From: "tar", To: "scdl"}); err == nil || !strings.Contains(err.Error(), "is not a directory") {
		t.Errorf("a shard, not a directory: %v", err)
	}
	if _, err := Convert(context.Background(), []string{filepath.Join(dir, "nosuch")}, filepath.Join(dir, "w.scdl"), ConvertOptions{From: "tar", To: "scdl"}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing directory: %v", err)
	}
}

// writeSynthSCDLCover writes a small SCDL archive and returns its number
// of cells.
func writeSynthSCDLCover(t *testing.T, dir string) int {
	t.Helper()
	const n = 12
	writeSynthSCDL(t, dir, n)
	return n
}

// TestConvertBarecatShardSize: tar shards into Barecat roll over to a new
// shard past the shard size, and every file reads back.
func TestConvertBarecatShardSize(t *testing.T) {
	src, want := coverFold(t, 2)
	bc := filepath.Join(t.TempDir(), "a.barecat")
	if _, err := Convert(context.Background(), []string{src}, bc, ConvertOptions{ShardSize: 1000}); err != nil {
		t.Fatal(err)
	}
	a, err := barecat.Open(bc)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if n := len(a.ShardPaths()); n < 2 {
		t.Errorf("%d shards past a shard size of 1000 bytes", n)
	}
	sameFiles(t, "Barecat", coverRead(t, "barecat", bc), want)
}

// TestPlainLocalRun: the first task of a run to find its shards plain
// records it, and the run's later tasks take the record without opening
// a shard; a compressed shard, or a run without a name, records nothing.
func TestPlainLocalRun(t *testing.T) {
	src, _ := coverFold(t, 3)
	shards, err := ConvertInputs([]string{src}, ConvertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), ".out.parts")
	if !plainLocalRun(shards, dir, "") {
		t.Fatal("plain shards said not plain")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a run without a name recorded %d files", len(ents))
	}
	if !plainLocalRun(shards, dir, "run1") {
		t.Fatal("plain shards said not plain")
	}
	// The record, not the shards: paths that are no files pass for run1.
	gone := []string{filepath.Join(dir, "nosuch.tar")}
	if !plainLocalRun(gone, dir, "run1") {
		t.Errorf("the run's record was not taken")
	}
	if plainLocalRun(gone, dir, "run2") {
		t.Errorf("another run took run1's record")
	}
	gz := coverGzipShard(t)
	if plainLocalRun(append(shards, gz), dir, "run3") {
		t.Errorf("a compressed shard said plain")
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, "*run3*")); len(ents) != 0 {
		t.Errorf("recorded for a compressed shard: %v", ents)
	}
}
