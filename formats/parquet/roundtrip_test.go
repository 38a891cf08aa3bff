package parquet

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	_ "github.com/itarconv/itarconv/fold"            // the tar format
	_ "github.com/itarconv/itarconv/formats/barecat" // a source that serves one run
	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// writeTar writes a tar shard of files (a name ending in "/" is a
// directory) at path.
func writeTar(t testing.TB, path string, files []formattest.File) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: f.Name, Mode: 0o644, Size: int64(len(f.Data)), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if n := len(f.Name); n > 0 && f.Name[n-1] == '/' {
			h.Typeflag, h.Size, h.Mode = tar.TypeDir, 0, 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write(f.Data)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tarShards writes shards as tar files shard-0000.tar, ... in a new
// directory and returns it.
func tarShards(t testing.TB, shards ...[]formattest.File) string {
	t.Helper()
	dir := t.TempDir()
	for i, s := range shards {
		writeTar(t, filepath.Join(dir, fmt.Sprintf("shard-%04d.tar", i)), s)
	}
	return dir
}

// convert opens src as format from and creates dst as format to through
// the registry, as a conversion without a converter of its own does.
func convert(t testing.TB, from, src, to, dst string, o registry.CreateOptions) (*registry.Result, error) {
	t.Helper()
	ds, err := registry.Lookup(from).Open([]string{src}, registry.OpenOptions{})
	if err != nil {
		return nil, err
	}
	defer ds.Close()
	return registry.Lookup(to).Create(context.Background(), ds, dst, o)
}

// roundTrip converts tar shards to Parquet and back, and returns the
// Parquet dataset's path and the members read back.
func roundTrip(t *testing.T, o registry.CreateOptions, shards ...[]formattest.File) (string, []formattest.File) {
	t.Helper()
	src := tarShards(t, shards...)
	pqDir := filepath.Join(t.TempDir(), "pq")
	if _, err := convert(t, "tar", src, "parquet", pqDir, o); err != nil {
		t.Fatalf("tar to Parquet: %v", err)
	}
	back := filepath.Join(t.TempDir(), "back")
	if _, err := convert(t, "parquet", pqDir, "tar", back, registry.CreateOptions{}); err != nil {
		t.Fatalf("Parquet to tar: %v", err)
	}
	return pqDir, formattest.Files(formattest.ReadSample(t, "tar", back))
}

func sameFiles(t *testing.T, got, want []formattest.File) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d members, want %d", len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i].Name != want[i].Name || !bytes.Equal(got[i].Data, want[i].Data) {
			t.Errorf("member %d: %q (%d bytes %.20q), want %q (%d bytes %.20q)", i, got[i].Name, len(got[i].Data), got[i].Data,
				want[i].Name, len(want[i].Data), want[i].Data)
		}
	}
}

func f(name, data string) formattest.File { return formattest.File{Name: name, Data: []byte(data)} }

// features reads the features of a dataset's first file.
func features(t *testing.T, dir string) map[string]string {
	t.Helper()
	r, err := inspect(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return r.(*Report).Files[0].Features
}

// TestRoundTripTar: tar shards -> Parquet -> tar shards gives the same
// members, names and bytes, in order, whatever order the members of a
// sample come in.
func TestRoundTripTar(t *testing.T) {
	jpg := string(bytes.Repeat([]byte{0xff, 0xd8, 0xff, 0xe0, 1, 2, 3}, 300))
	cases := []struct {
		name   string
		shards [][]formattest.File
		feats  map[string]string
		rows   int64
	}{
		{"typed", [][]formattest.File{
			{f("a/000.cls", "3"), f("a/000.jpg", jpg), f("a/000.json", `{"x": [1, 2]}`), f("a/000.txt", "héllo")},
			{f("a/001.cls", "-12"), f("a/001.json", `null`), f("a/001.txt", ""), f("a/002.cls", "0"), f("a/002.jpg", ""), f("a/002.bin", "\x00\x01")},
		}, map[string]string{KeyColumn: "string", "cls": "int64", "jpg": "Image", "json": "string", "txt": "string", "bin": "binary"}, 3},
		{"untyped", [][]formattest.File{
			{f("k0.cls", "007"), f("k0.txt", "\xff\xfe"), f("k0.json", "{"), f("k1.cls", "1"), f("k1.txt", "ok"), f("k1.json", "1")},
		}, map[string]string{KeyColumn: "string", "cls": "binary", "txt": "binary", "json": "binary"}, 2},
		// Members that do not follow the column order, or whose key came
		// before, start rows of their own, so that they read back in order.
		{"order", [][]formattest.File{
			{f("a.cls", "1"), f("a.jpg", jpg), f("b.jpg", jpg[:10]), f("b.cls", "2"), f("c.cls", "3"), f("c.cls", "4"), f("a.txt", "again")},
		}, map[string]string{KeyColumn: "string", "cls": "int64", "jpg": "Image", "txt": "string"}, 6},
		{"dotted", [][]formattest.File{
			{f("dir.x/k.seg.png", "\x89PNG\r\n\x1a\nxx"), f("dir.x/k.seg.npy", "NUMPY"), f("dir.x/k2.seg.png", "p")},
		}, map[string]string{KeyColumn: "string", "seg.png": "binary", "seg.npy": "binary"}, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir, got := roundTrip(t, registry.CreateOptions{Workers: 2}, c.shards...)
			var want []formattest.File
			for _, s := range c.shards {
				want = append(want, s...)
			}
			sameFiles(t, got, want)
			feats := features(t, dir)
			if fmt.Sprint(feats) != fmt.Sprint(c.feats) {
				t.Errorf("features %v, want %v", feats, c.feats)
			}
			d, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			if d.files[0].Rows != c.rows {
				t.Errorf("%d rows, want %d", d.files[0].Rows, c.rows)
			}
		})
	}
}

// TestNotRepresentable: what a Hub dataset has no place for is refused,
// naming the shard, the offset and the member, and nothing is written.
func TestNotRepresentable(t *testing.T) {
	for _, c := range []struct {
		name  string
		files []formattest.File
	}{
		{"directory", []formattest.File{f("a.cls", "1"), f("d/", "")}},
		{"no extension", []formattest.File{f("a.cls", "1"), f("README", "x")}},
		{"key column", []formattest.File{f("a.__key__", "1")}},
		{"not UTF-8", []formattest.File{f("\xff.cls", "1")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := tarShards(t, c.files)
			parent := t.TempDir()
			_, err := convert(t, "tar", src, "parquet", filepath.Join(parent, "pq"), registry.CreateOptions{})
			if !errors.Is(err, ErrNotRepresentable) {
				t.Fatalf("%v, want ErrNotRepresentable", err)
			}
			if want := "shard-0000.tar, offset "; !bytes.Contains([]byte(err.Error()), []byte(want)) {
				t.Errorf("%q names no shard and offset", err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) > 0 {
				t.Errorf("left %v", ents)
			}
		})
	}
}

// TestShardSize: files roll over past the shard size and are named as
// push_to_hub names them; every member reads back.
func TestShardSize(t *testing.T) {
	var files []formattest.File
	for i := range 40 {
		files = append(files, f(fmt.Sprintf("%04d.bin", i), string(bytes.Repeat([]byte{byte(i)}, 5000))))
	}
	dir, got := roundTrip(t, registry.CreateOptions{ShardSize: 30000, Format: CreateOptions{Split: "validation", Compression: "none"}}, files)
	sameFiles(t, got, files)
	names, _ := filepath.Glob(filepath.Join(dir, "data", "*"))
	if len(names) < 4 {
		t.Fatalf("%d files: %v", len(names), names)
	}
	for i, n := range names {
		if want := HubName("validation", i, len(names)); filepath.Base(n) != want {
			t.Errorf("file %d: %s, want %s", i, filepath.Base(n), want)
		}
	}
}

// TestManyBatches: a Parquet dataset read in many batches, whose bytes
// come from arenas reused once a batch is written, converts to tar shards
// with every member's name and bytes (an index keeps views of names past
// their batch: names must not be reused).
func TestManyBatches(t *testing.T) {
	defer func(b int64) { batchBytes = b }(batchBytes)
	batchBytes = 3000
	var files []formattest.File
	for i := range 400 {
		ext := []string{"cls", "jpg", "txt"}[i%3]
		if i > 300 && i%7 == 0 {
			ext = fmt.Sprintf("x%d", i) // extensions first seen late
		}
		files = append(files, f(fmt.Sprintf("k%04d.%s", i/3, ext), string(bytes.Repeat([]byte{byte(i)}, 200+i))))
	}
	_, got := roundTrip(t, registry.CreateOptions{Workers: 2, Format: CreateOptions{RowGroupBytes: 10000}}, files[:200], files[200:])
	sameFiles(t, got, files)
}

// TestInMemoryRowsManyGroups: rows whose bytes the source carries (and
// reuses once a batch is written), written in many small row groups:
// each value is copied into the group its sample ends in, the samples
// that straddle batches and groups included.
func TestInMemoryRowsManyGroups(t *testing.T) {
	defer func(b int64) { batchBytes = b }(batchBytes)
	batchBytes = 2500
	var files []formattest.File
	for i := range 300 {
		ext := []string{"cls", "jpg", "txt"}[i%3]
		files = append(files, f(fmt.Sprintf("k%04d.%s", i/3, ext), string(bytes.Repeat([]byte{byte(i)}, 100+i*3))))
	}
	src := tarShards(t, files)
	pq1 := filepath.Join(t.TempDir(), "pq1")
	if _, err := convert(t, "tar", src, "parquet", pq1, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Parquet's own rows carry their bytes, from arenas reused batch after
	// batch.
	pq2 := filepath.Join(t.TempDir(), "pq2")
	if _, err := convert(t, "parquet", pq1, "parquet", pq2, registry.CreateOptions{Workers: 2, Format: CreateOptions{RowGroupBytes: 7000}}); err != nil {
		t.Fatal(err)
	}
	back := filepath.Join(t.TempDir(), "back")
	if _, err := convert(t, "parquet", pq2, "tar", back, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sameFiles(t, formattest.Files(formattest.ReadSample(t, "tar", back)), files)
}

// TestFromBarecat: a source that serves one run (Barecat's) converts:
// each of the write's two passes takes a source of its own.
func TestFromBarecat(t *testing.T) {
	files := formattest.Files(formattest.Sample())
	bc := filepath.Join(t.TempDir(), "x.barecat")
	if _, err := registry.Lookup("barecat").Create(context.Background(), &formattest.Rows{Shards: formattest.Sample()}, bc, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "pq")
	if _, err := convert(t, "barecat", bc, "parquet", out, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := readMembers(t, out)
	// Barecat gives its files in address order, the order they were added.
	sameFiles(t, got, files)
}

// TestPlanTypedLate: the first pass, which checks the typed columns'
// members on the workers, types a column by every member of every shard:
// one member that does not parse, or is too large to check, late in a
// later shard, makes its column binary.
func TestPlanTypedLate(t *testing.T) {
	var shards [][]formattest.File
	for s := range 3 {
		var files []formattest.File
		for i := range 300 {
			k := fmt.Sprintf("s%d/%04d", s, i)
			js, txt := fmt.Sprintf(`{"i": %d}`, i), fmt.Sprintf("sample %d", i)
			if s == 2 && i == 250 {
				js = "{"
			}
			if s == 1 && i == 299 {
				txt = string(bytes.Repeat([]byte("a"), maxTyped+1))
			}
			files = append(files, f(k+".cls", fmt.Sprint(i-100)), f(k+".json", js), f(k+".txt", txt), f(k+".bin", "xy"))
		}
		shards = append(shards, files)
	}
	dir, got := roundTrip(t, registry.CreateOptions{Workers: 2}, shards...)
	var want []formattest.File
	for _, s := range shards {
		want = append(want, s...)
	}
	sameFiles(t, got, want)
	feats := features(t, dir)
	wantFeats := map[string]string{KeyColumn: "string", "cls": "int64", "json": "binary", "txt": "binary", "bin": "binary"}
	if fmt.Sprint(feats) != fmt.Sprint(wantFeats) {
		t.Errorf("features %v, want %v", feats, wantFeats)
	}
}
