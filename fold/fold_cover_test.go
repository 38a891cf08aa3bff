package fold

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
)

func gzipBytes(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// readFiles reads a fold (a directory or shards) through the tar format's
// registry entry: its regular members' contents by name.
func readFiles(t *testing.T, paths ...string) map[string]string {
	t.Helper()
	d, err := registry.Lookup("tar").Open(paths, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	got := map[string]string{}
	err = d.List(context.Background(), func(e registry.Entry) error {
		b, err := d.ReadEntry(e.Name)
		got[e.Name] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// memSource is a source of rows made in memory, one shard; payloads are
// read from bodies by name.
type memSource struct {
	rows   []dataset.Row
	bodies map[string]string
}

func (m *memSource) NumShards() int       { return 1 }
func (m *memSource) ShardName(int) string { return "mem" }
func (m *memSource) Scan(_ context.Context, _ int, emit func([]dataset.Row) error) error {
	return emit(append([]dataset.Row(nil), m.rows...))
}
func (m *memSource) OpenPayload(r *dataset.Row) (io.Reader, error) {
	b, ok := m.bodies[string(r.Name)]
	if !ok {
		return nil, fmt.Errorf("%s: %w", r.Name, fs.ErrNotExist)
	}
	return strings.NewReader(b), nil
}

func file(name, body string) dataset.Row {
	return dataset.Row{Name: []byte(name), Kind: dataset.KindFile, Size: int64(len(body)), Mode: 0o644, ModTime: 1700000000}
}

// TestWriteStream: rows become one tar stream, files, directories and
// links as tar members, inline payloads too; what a member cannot hold is
// counted; a payload shorter or longer than its row, or an unsafe name,
// fails the stream naming the member.
func TestWriteStream(t *testing.T) {
	rows := []dataset.Row{
		{Name: []byte("d/"), Kind: dataset.KindDir, Mode: 0o755},
		file("d/a.txt", "alpha"),
		{Name: []byte("d/l"), Linkname: []byte("a.txt"), Kind: dataset.KindSymlink},
		{Name: []byte("d/h"), Linkname: []byte("d/a.txt"), Kind: dataset.KindHardlink},
		{Name: []byte("dev"), Kind: dataset.KindOther},
		file("empty", ""),
	}
	inline := file("d/in.json", `{"x":1}`)
	inline.Inline = []byte(`{"x":1}`)
	rows = append(rows, inline)
	src := &memSource{rows: rows, bodies: map[string]string{"d/a.txt": "alpha"}}
	var out bytes.Buffer
	st, err := WriteStream(context.Background(), src, &out, StreamOptions{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Members != 5 || st.Bytes != 5+7 || st.Skipped["hardlink"] != 1 || st.Skipped["other"] != 1 {
		t.Errorf("stats %+v", st)
	}
	tr := tar.NewReader(&out)
	var got []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(tr)
		got = append(got, fmt.Sprintf("%c %s %s%s", h.Typeflag, h.Name, b, h.Linkname))
	}
	want := "[5 d/  0 d/a.txt alpha 2 d/l a.txt 0 empty  0 d/in.json {\"x\":1}]"
	if fmt.Sprint(got) != want {
		t.Errorf("stream\n%q\nwant\n%q", fmt.Sprint(got), want)
	}

	for _, c := range []struct {
		row  dataset.Row
		body string
		want string
	}{
		{file("short.txt", "abc"), "ab", "payload ended after 2 of 3 bytes"},
		{file("long.txt", "abc"), "abcdef", "3 bytes more than its size"},
		{file("../escape.txt", "x"), "x", "unsafe"},
		{file("gone.txt", "x"), "", "file does not exist"},
	} {
		bodies := map[string]string{string(c.row.Name): c.body}
		if c.want == "file does not exist" {
			bodies = nil
		}
		_, err := WriteStream(context.Background(), &memSource{rows: []dataset.Row{c.row}, bodies: bodies}, io.Discard, StreamOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.row.Name, err, c.want)
		}
	}
	if _, err := WriteStream(context.Background(), &memSource{rows: rows[:2], bodies: src.bodies}, failWriter{}, StreamOptions{}); err == nil || !strings.Contains(err.Error(), "writing the tar stream") {
		t.Errorf("a failing writer: %v", err)
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestUnpack: compressed and plain shards become a fold of plain shards,
// byte for byte, with its index; a second run is refused unless it
// replaces the fold, and a replacing run with fewer shards removes the
// earlier ones.
func TestUnpack(t *testing.T) {
	in := t.TempDir()
	plain0 := testutil.WriteShard(t, "", "a.jpg", "jpeg a", "a.cls", "1")
	plain1 := testutil.WriteShard(t, filepath.Join(in, "b.tar"), "b.jpg", "jpeg b", "b.cls", "2", "noext", "x")
	gz := filepath.Join(in, "a.tar.gz")
	os.WriteFile(gz, gzipBytes(plain0), 0o644)
	shards := []string{gz, filepath.Join(in, "b.tar")}

	dir := filepath.Join(t.TempDir(), "out")
	var last dataset.Progress
	st, err := Unpack(context.Background(), shards, UnpackOptions{Dir: dir, Fold: "val", Workers: 2, Progress: func(p dataset.Progress) { last = p }})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Shards) != 2 || filepath.Base(st.Shards[0]) != "val_0000.tar" || st.Members != 5 || st.Index.Rows != 4 {
		t.Errorf("stats %+v, index %+v", st, st.Index)
	}
	if st.Bytes != int64(len(plain0)+len(plain1)) {
		t.Errorf("%d bytes, want %d", st.Bytes, len(plain0)+len(plain1))
	}
	for i, want := range [][]byte{plain0, plain1} {
		if b, _ := os.ReadFile(st.Shards[i]); !bytes.Equal(b, want) {
			t.Errorf("shard %d differs from its input, decompressed", i)
		}
	}
	if last.Rows != 5 {
		t.Errorf("progress %+v", last)
	}
	if w := NotIndexed(st.Index, "members"); !strings.Contains(w, `1 members not indexed (1 without an extension`) || !strings.Contains(w, `"noext"`) {
		t.Errorf("NotIndexed: %q", w)
	}
	f, err := Open(filepath.Join(dir, "val.taridx"), nil)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := f.Lookup("b.jpg")
	if err != nil || len(ms) != 1 {
		t.Fatalf("lookup: %v %v", ms, err)
	}
	var body bytes.Buffer
	if _, err := f.Copy(context.Background(), &body, ms[0]); err != nil || body.String() != "jpeg b" {
		t.Errorf("copy: %q %v", body.String(), err)
	}

	if _, err := Unpack(context.Background(), shards[:1], UnpackOptions{Dir: dir, Fold: "val"}); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "val_0001.tar") {
		t.Errorf("a second run: %v, want ErrExists naming the shard left over", err)
	}
	st, err = Unpack(context.Background(), shards[:1], UnpackOptions{Dir: dir, Fold: "val", Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Replaced) != 1 || filepath.Base(st.Replaced[0]) != "val_0001.tar" {
		t.Errorf("replaced %v", st.Replaced)
	}
	left, _ := filepath.Glob(filepath.Join(dir, "val_*.tar"))
	if len(left) != 1 {
		t.Errorf("shards left %v", left)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the fold's directory holds %v, want a shard and its index", names)
	}

	if _, err := Unpack(context.Background(), make([]string, taridx.MaxShards+1), UnpackOptions{Dir: dir}); !errors.Is(err, ErrTooManyShards) {
		t.Errorf("too many shards: %v", err)
	}
	empty := t.TempDir()
	if _, err := Unpack(context.Background(), []string{filepath.Join(in, "nosuch.tar")}, UnpackOptions{Dir: empty}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing shard: %v", err)
	}
	if ents, _ := os.ReadDir(empty); len(ents) != 0 {
		t.Errorf("a failed run left %d files", len(ents))
	}
	// A stream on standard input.
	st, err = Unpack(context.Background(), []string{"-"}, UnpackOptions{Dir: t.TempDir(), Stdin: bytes.NewReader(gzipBytes(plain1))})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(st.Shards[0]); !bytes.Equal(b, plain1) || filepath.Base(st.Shards[0]) != "train_0000.tar" {
		t.Errorf("standard input: %s differs", st.Shards[0])
	}
}

// TestStageCommitAll: folds staged together appear together; when one
// cannot be committed, those committed before it are removed again, and a
// fold is committed once.
func TestStageCommitAll(t *testing.T) {
	dir := t.TempDir()
	mk := func(fold string, n int) *Pending {
		var rows []dataset.Row
		bodies := map[string]string{}
		for i := range n {
			r := file(fmt.Sprintf("%s%d.txt", fold, i), strings.Repeat(fold, i+1))
			rows = append(rows, r)
			bodies[string(r.Name)] = strings.Repeat(fold, i+1)
		}
		p, err := Stage(context.Background(), &memSource{rows: rows, bodies: bodies}, WriteOptions{Dir: dir, Fold: fold, MaxMembers: 2})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := mk("a", 3), mk("b", 1)
	if ents, _ := filepath.Glob(filepath.Join(dir, "[ab]*")); len(ents) != 0 {
		t.Errorf("staged folds visible: %v", ents)
	}
	stats, err := CommitAll(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(stats[0].Shards) != 2 || len(stats[1].Shards) != 1 || stats[0].Members != 3 {
		t.Errorf("stats %+v %+v", stats[0], stats[1])
	}
	if _, err := a.Commit(); err == nil {
		t.Error("a fold committed twice")
	}
	a.Abort() // after Commit: nothing
	if got := readFiles(t, filepath.Join(dir, "a_0000.tar"), filepath.Join(dir, "a_0001.tar")); got["a2.txt"] != "aaa" || len(got) != 3 {
		t.Errorf("fold a: %v", got)
	}

	dir2 := t.TempDir()
	dir = dir2
	c, d := mk("c", 1), mk("d", 1)
	d.Abort()
	if _, err := CommitAll(c, d); err == nil {
		t.Fatal("CommitAll of an aborted fold succeeded")
	}
	if ents, _ := os.ReadDir(dir2); len(ents) != 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("after a failed CommitAll: %v", names)
	}
}

// TestWriteReplace: a fold written over an earlier one of more shards is
// refused (ErrExists, naming a few of them and how many) unless it
// replaces it; replacing removes the shards it did not overwrite.
func TestWriteReplace(t *testing.T) {
	dir := t.TempDir()
	for i := range 8 {
		testutil.WriteShard(t, filepath.Join(dir, fmt.Sprintf("train_%04d.tar", i)), fmt.Sprintf("old%d.txt", i), "old")
	}
	src := &memSource{rows: []dataset.Row{file("new.txt", "new")}, bodies: map[string]string{"new.txt": "new"}}
	_, err := Write(context.Background(), src, WriteOptions{Dir: dir})
	if !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "and 2 more (7 in all)") {
		t.Errorf("without Replace: %v", err)
	}
	st, err := Write(context.Background(), src, WriteOptions{Dir: dir, Replace: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Replaced) != 7 || len(st.Shards) != 1 {
		t.Errorf("replaced %v, shards %v", st.Replaced, st.Shards)
	}
	if got := readFiles(t, dir); len(got) != 1 || got["new.txt"] != "new" {
		t.Errorf("the fold holds %v", got)
	}
}

// TestShardsResolution: what Shards reads as a fold: a directory's only
// fold, or the one named; an index's shards through its manifest, checked
// against it; a shard set in the order given; and the errors a user meets.
func TestShardsResolution(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "shards")
	os.Mkdir(sub, 0o755)
	var shards []string
	for i := range 3 {
		p := filepath.Join(sub, fmt.Sprintf("web-%06d.tar", i))
		testutil.WriteShard(t, p, fmt.Sprintf("k%d.txt", i), strings.Repeat("x", 100*i))
		shards = append(shards, p)
	}
	// Indexed from elsewhere: a manifest names the shards.
	idx := filepath.Join(dir, "web.taridx")
	if _, err := BuildIndex(context.Background(), shards, idx, IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(ManifestPath(idx)); err != nil {
		t.Fatalf("no manifest: %v", err)
	}
	got, name, err := Shards([]string{idx}, "")
	if err != nil || name != "web" || fmt.Sprint(got) != fmt.Sprint(shards) {
		t.Errorf("from the index: %v %q %v", got, name, err)
	}
	got, name, err = Shards([]string{dir}, "")
	if err != nil || name != "web" || len(got) != 3 || got[2] != shards[2] {
		t.Errorf("from the index's directory: %v %q %v", got, name, err)
	}
	if got := readFiles(t, idx); got["k2.txt"] != strings.Repeat("x", 200) {
		t.Errorf("read through the index: %v", got)
	}
	f, err := Open(idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.CheckManifest(context.Background()); err != nil {
		t.Errorf("fresh manifest: %v", err)
	}
	// A shard grows: its manifest no longer holds, wherever it is read from.
	testutil.WriteShard(t, shards[1], "k1.txt", strings.Repeat("x", 100), "k1b.txt", "more")
	if err := f.CheckManifest(context.Background()); !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "web-000001.tar") {
		t.Errorf("stale manifest: %v", err)
	}
	for _, p := range []string{idx, dir} {
		if _, _, err := Shards([]string{p}, ""); !errors.Is(err, ErrStale) {
			t.Errorf("%s with a stale shard: %v, want ErrStale", p, err)
		}
	}

	// A directory of two folds.
	two := t.TempDir()
	testutil.WriteShard(t, filepath.Join(two, "train_0000.tar"), "a.txt", "a")
	testutil.WriteShard(t, filepath.Join(two, "val_0000.tar"), "b.txt", "b")
	if _, _, err := Shards([]string{two}, ""); !errors.Is(err, ErrChooseFold) || !strings.Contains(err.Error(), "train") {
		t.Errorf("two folds: %v", err)
	}
	if got, name, err := Shards([]string{two}, "val"); err != nil || name != "val" || len(got) != 1 {
		t.Errorf("the fold named: %v %q %v", got, name, err)
	}
	if _, _, err := Shards([]string{two}, "test"); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), `no fold "test"`) {
		t.Errorf("a fold not there: %v", err)
	}
	if _, _, err := Shards([]string{t.TempDir()}, ""); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "no tar shards") {
		t.Errorf("an empty directory: %v", err)
	}
	// Shard sets.
	set := []string{filepath.Join(two, "val_0000.tar"), filepath.Join(two, "train_0000.tar")}
	if got, name, err := Shards(set, "ignored"); err != nil || name != "" || fmt.Sprint(got) != fmt.Sprint(set) {
		t.Errorf("a shard set: %v %q %v", got, name, err)
	}
	if _, _, err := Shards([]string{set[0], sub}, ""); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory among shards: %v", err)
	}
	// A link to a directory, told by what it names, not by the link.
	link := filepath.Join(t.TempDir(), "d.tar")
	if err := os.Symlink(sub, link); err == nil {
		if _, _, err := Shards([]string{set[0], link}, ""); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("a link to a directory among shards: %v", err)
		}
	}
	if _, _, err := Shards([]string{set[0], filepath.Join(two, "nosuch.tar")}, ""); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing shard: %v", err)
	}
}

// TestTarFormatRegistry: the tar format claims shards and directories of
// them by name, and writes a fold by parts that merges into the fold one
// run writes.
func TestTarFormatRegistry(t *testing.T) {
	tf := registry.Lookup("tar")
	dir := t.TempDir()
	var shards []string
	want := map[string]string{}
	for i := range 4 {
		p := filepath.Join(dir, fmt.Sprintf("train_%04d.tar", i))
		var files []string
		for j := range 3 {
			name, body := fmt.Sprintf("s%d_%d.txt", i, j), strings.Repeat(fmt.Sprint(i, j), 40*(j+1))
			files = append(files, name, body)
			want[name] = body
		}
		testutil.WriteShard(t, p, files...)
		shards = append(shards, p)
	}
	for p, claimed := range map[string]bool{"x.tar": true, "x.tar.gz": true, "x.txt": false, dir: true, t.TempDir(): false, filepath.Join(dir, "nosuch"): false} {
		if got := tf.Claims(p); got != claimed {
			t.Errorf("claims %s: %v, want %v", p, got, claimed)
		}
	}

	out := filepath.Join(t.TempDir(), "merged")
	var parts []string
	for k := range 2 {
		part := filepath.Join(t.TempDir(), fmt.Sprint("part", k))
		os.Mkdir(part, 0o755)
		in := rowsInput{NewTarShards(shards[2*k:2*k+2], tarfile.Options{})}
		if _, err := tf.CreatePart(context.Background(), in, part, registry.CreateOptions{Workers: 1}); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, part)
	}
	res, err := tf.MergeParts(context.Background(), parts, out, registry.CreateOptions{Format: CreateOptions{Fold: "all"}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Summary, "12 members") || !strings.Contains(res.Summary, "merged from 2 parts") {
		t.Errorf("summary %q", res.Summary)
	}
	got := readFiles(t, out)
	if len(got) != len(want) {
		t.Errorf("%d files, want %d", len(got), len(want))
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %q, want %q", k, got[k], v)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "all.taridx")); err != nil {
		t.Errorf("no index of the merged fold: %v", err)
	}
}

// rowsInput is a registry.Input of one source.
type rowsInput struct{ src dataset.PayloadSource }

func (r rowsInput) Rows(bool) (dataset.PayloadSource, error) { return r.src, nil }

// TestTarShardsReadPayloads: with ReadPayloads, rows carry their payloads
// (Inline) read on the worker, batches are cut at BatchBytes, and the
// shard's file and size are the shard's; a shard cut short after its
// headers were read fails naming it.
func TestTarShardsReadPayloads(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.tar")
	body := strings.Repeat("y", 3000)
	raw := testutil.WriteShard(t, p, "a.txt", "alpha", "b.bin", body, "c.txt", "gamma")
	src := NewTarShards([]string{p}, tarfile.Options{})
	src.ReadPayloads, src.BatchBytes = true, 2000
	var batches []int
	got := map[string]string{}
	err := src.Scan(context.Background(), 0, func(rows []dataset.Row) error {
		batches = append(batches, len(rows))
		for _, r := range rows {
			got[string(r.Name)] = string(r.Inline)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got["a.txt"] != "alpha" || got["b.bin"] != body || got["c.txt"] != "gamma" {
		t.Errorf("inline payloads %v", got)
	}
	if fmt.Sprint(batches) != "[2 1]" {
		t.Errorf("batches %v, want one cut past 2000 bytes", batches)
	}
	if src.ShardName(0) != "s.tar" || src.ShardSize(0) != int64(len(raw)) || src.Stats[0].Members != 3 || src.Stats[0].End == 0 {
		t.Errorf("name %q, size %d, stats %+v", src.ShardName(0), src.ShardSize(0), src.Stats[0])
	}
	f, err := src.ShardFile(0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if path, err := src.File(0); err != nil || path != p {
		t.Errorf("File: %q %v", path, err)
	}
	if NewTarShards([]string{filepath.Join(dir, "nosuch.tar")}, tarfile.Options{}).ShardSize(0) != 0 {
		t.Error("a missing shard has a size")
	}

	// Runs of small payloads: one read each, a large one in none.
	rows := []dataset.Row{
		{Kind: dataset.KindFile, DataOffset: 512, Size: 10},
		{Kind: dataset.KindDir, DataOffset: 1024},
		{Kind: dataset.KindFile, DataOffset: 1536, Size: 20},
		{Kind: dataset.KindFile, DataOffset: 2048, Size: MaxInline + 1},
		{Kind: dataset.KindFile, DataOffset: 3 << 24, Size: 5},
		{Kind: dataset.KindFile, DataOffset: 4 << 24, Size: 5},
	}
	var runs []string
	SmallRuns(rows, 1<<20, func(i, j int, lo, hi int64) error {
		runs = append(runs, fmt.Sprintf("%d-%d@%d-%d", i, j, lo, hi))
		return nil
	})
	if fmt.Sprint(runs) != fmt.Sprint([]string{"0-3@512-1556", "4-5@50331648-50331653", "5-6@67108864-67108869"}) {
		t.Errorf("runs %v", runs)
	}
	stop := errors.New("stop")
	if err := SmallRuns(rows, 1<<20, func(int, int, int64, int64) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("fn's error: %v", err)
	}
	// Payloads past the end of the file.
	short := []dataset.Row{{Name: []byte("x"), Kind: dataset.KindFile, DataOffset: int64(len(raw)) - 10, Size: 100}}
	rf, _ := os.Open(p)
	defer rf.Close()
	if err := readPayloads(rf, short); !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "reading its payload") {
		t.Errorf("a payload past the end: %v", err)
	}
}

// TestTarShardsCompressed: a compressed shard is read through its
// decompressed copy; an error in it names the shard, decompressed, and a
// canceled scan stops with the context's error.
func TestTarShardsCompressed(t *testing.T) {
	dir := t.TempDir()
	raw := testutil.WriteShard(t, "", "a.txt", "alpha", "b.txt", "beta")
	gz := filepath.Join(dir, "s.tar.gz")
	os.WriteFile(gz, gzipBytes(raw), 0o644)
	d, err := registry.Lookup("tar").Open([]string{gz}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.ReadEntry("b.txt")
	if err != nil || string(b) != "beta" {
		t.Errorf("ReadEntry: %q %v", b, err)
	}
	if _, err := d.ReadEntry("c.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a member not there: %v", err)
	}
	if d.Size() != int64(len(gzipBytes(raw))) || d.Unit() != "members" || d.Warnings() != nil {
		t.Errorf("size %d, unit %q", d.Size(), d.Unit())
	}
	if err := d.Close(); err != nil {
		t.Error(err)
	}

	// A damaged compressed shard: its header blocks, garbage.
	bad := filepath.Join(dir, "bad.tar.gz")
	os.WriteFile(bad, gzipBytes(bytes.Repeat([]byte{0xff}, 2048)), 0o644)
	d, err = registry.Lookup("tar").Open([]string{bad}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	err = d.List(context.Background(), func(registry.Entry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "bad.tar.gz, decompressed") {
		t.Errorf("a damaged compressed shard: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := filepath.Join(dir, "p.tar")
	os.WriteFile(p, raw, 0o644)
	src := NewTarShards([]string{p}, tarfile.Options{})
	if err := src.Scan(ctx, 0, func([]dataset.Row) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("a canceled scan: %v", err)
	}
}

// TestOpenAllFolds: a directory's indexed folds, or the one named; an index
// whose shards are gone is an error naming it.
func TestOpenAllFolds(t *testing.T) {
	dir := t.TempDir()
	for _, fold := range []string{"train", "val"} {
		var shards []string
		for i := range 2 {
			p := filepath.Join(dir, fmt.Sprintf("%s_%04d.tar", fold, i))
			testutil.WriteShard(t, p, fmt.Sprintf("%s%d.txt", fold, i), fold)
			shards = append(shards, p)
		}
		if _, err := BuildIndex(context.Background(), shards, filepath.Join(dir, fold+".taridx"), IndexOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(ManifestPath(filepath.Join(dir, fold+".taridx"))); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a manifest for shards glzn finds beside the index: %v", err)
		}
	}
	folds, err := OpenAll(dir, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range folds {
		names = append(names, fmt.Sprintf("%s:%d", f.Name, len(f.Shards)))
	}
	sort.Strings(names)
	if fmt.Sprint(names) != "[train:2 val:2]" {
		t.Errorf("folds %v", names)
	}
	if folds, err := OpenAll(dir, "val", nil); err != nil || len(folds) != 1 || folds[0].Name != "val" {
		t.Errorf("the fold named: %v", err)
	}
	if _, err := OpenAll(dir, "test", nil); err == nil || !strings.Contains(err.Error(), `no indexed fold "test"`) {
		t.Errorf("a fold not there: %v", err)
	}
	if _, err := OpenAll(t.TempDir(), "", nil); err == nil || !strings.Contains(err.Error(), "run itarconv index first") {
		t.Errorf("no index: %v", err)
	}
	if _, err := OpenAll(filepath.Join(dir, "nosuch"), "", nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing path: %v", err)
	}
	for _, s := range []string{"val_0000.tar", "val_0001.tar"} {
		os.Remove(filepath.Join(dir, s))
	}
	if _, err := Open(filepath.Join(dir, "val.taridx"), nil); err == nil || !strings.Contains(err.Error(), "no shards of fold val beside the index") {
		t.Errorf("an index without its shards: %v", err)
	}
	if folds, err := OpenAll(dir, "", nil); err != nil || len(folds) != 1 {
		t.Errorf("a directory with an index of shards elsewhere: %d folds, %v", len(folds), err)
	}
}
