package barecat

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/itarconv/itarconv/internal/sqliteuri"
)

// TestWriterReproducesConformance rebuilds barecat's own archives with the
// Writer, adding their files in barecat's order with barecat's shard size
// limit: every files row (shard, offset and crc32c included), every shard
// byte, every directory counter, the config and the schema must come out
// as barecat wrote them.
func TestWriterReproducesConformance(t *testing.T) {
	for _, name := range []string{"basic", "cli_create", "empty", "multishard"} {
		t.Run(name, func(t *testing.T) {
			e := loadExpected(t, name)
			src := mustOpen(t, caseIndex(t, name))
			out := filepath.Join(t.TempDir(), e.IndexFile)
			limit := src.ShardSizeLimit()
			if limit == UnlimitedShardSize {
				limit = 0
			}
			w, err := Create(out, WriterOptions{ShardSizeLimit: limit})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Abort()
			// barecat's order: by address, an empty file before the file at
			// the same offset (it was added first).
			files := allFiles(t, src, ByAddress)
			slices.SortStableFunc(files, func(a, b File) int {
				if a.Shard != b.Shard {
					return a.Shard - b.Shard
				}
				if a.Offset != b.Offset {
					return int(a.Offset - b.Offset)
				}
				return int(a.Size - b.Size)
			})
			for _, f := range files {
				r, err := src.Open(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := w.Add(f, r); err != nil {
					t.Fatal(err)
				}
			}
			// Directories with metadata were added explicitly; the others
			// barecat's triggers created (with the insertion time, which a
			// bulk load leaves NULL).
			explicit := map[string]bool{}
			for _, d := range e.Dirs {
				if d.Path == "" || d.Mode != nil || d.UID != nil {
					explicit[d.Path] = true
					if err := w.AddDir(d.dir()); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}

			a := mustOpen(t, out)
			if got, want := allFiles(t, a, ByPath), allFiles(t, src, ByPath); !slices.Equal(got, want) {
				t.Errorf("files differ:\n got %+v\nwant %+v", got, want)
			}
			dirs := allDirs(t, a)
			if len(dirs) != len(e.Dirs) {
				t.Fatalf("%d dirs, want %d", len(dirs), len(e.Dirs))
			}
			for i, x := range e.Dirs {
				want := x.dir()
				if !explicit[x.Path] {
					want.Mode, want.UID, want.GID, want.MtimeNs = 0, 0, 0, 0
					want.HasMode, want.HasUID, want.HasGID, want.HasMtime = false, false, false, false
				}
				if dirs[i] != want {
					t.Errorf("dir %d:\n got %+v\nwant %+v", i, dirs[i], want)
				}
			}
			if len(a.ShardPaths()) != len(e.Shards) {
				t.Fatalf("%d shards, want %d", len(a.ShardPaths()), len(e.Shards))
			}
			for i, p := range a.ShardPaths() {
				got, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(src.ShardPaths()[i])
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) || filepath.Base(p) != e.Shards[i].Name {
					t.Errorf("shard %d (%s): %d bytes differ from barecat's %d", i, p, len(got), len(want))
				}
			}
			checkConfig(t, out, map[string]int64{"use_triggers": 1, "shard_size_limit": src.ShardSizeLimit(),
				"schema_version_major": 0, "schema_version_minor": 3})
			dump, err := os.ReadFile(filepath.Join(confDir(t, name), "schema_dump.sql"))
			if err != nil {
				t.Fatal(err)
			}
			if got := schemaDump(t, out); got != string(dump) {
				t.Errorf("schema differs from barecat's schema_dump.sql:\n%s", got)
			}
			checkVerify(t, a)
		})
	}
}

// TestWriterWrap rebuilds barecat's --wrap conversion of a tar: a shard
// that is a relative symlink to the tar, rows pointing at the members'
// bytes, no CRCs.
func TestWriterWrap(t *testing.T) {
	e := loadExpected(t, "wrap_tar")
	src := mustOpen(t, caseIndex(t, "wrap_tar"))
	dir := t.TempDir()
	tarBytes, err := os.ReadFile(filepath.Join(confDir(t, "wrap_tar"), "input.tar"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "tars"), 0o755); err != nil {
		t.Fatal(err)
	}
	tarPath := filepath.Join(dir, "tars", "input.tar")
	if err := os.WriteFile(tarPath, tarBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", e.IndexFile)
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	n, err := w.LinkShard(tarPath)
	if err != nil || n != 0 {
		t.Fatalf("LinkShard: %d, %v", n, err)
	}
	for _, f := range allFiles(t, src, ByAddress) {
		if err := w.AddExternal(f); err != nil {
			t.Fatal(err)
		}
	}
	explicit := map[string]bool{}
	for _, d := range e.Dirs { // the tar's directories, and the root's metadata
		if d.Path == "" || d.Mode != nil {
			explicit[d.Path] = true
			if err := w.AddDir(d.dir()); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	link, err := os.Readlink(ShardPath(out, 0))
	if err != nil || link != filepath.Join("..", "tars", "input.tar") {
		t.Fatalf("shard 0 links to %q, %v", link, err)
	}
	a := mustOpen(t, out)
	if got, want := allFiles(t, a, ByPath), allFiles(t, src, ByPath); !slices.Equal(got, want) {
		t.Errorf("files differ:\n got %+v\nwant %+v", got, want)
	}
	for _, x := range e.Files {
		f, err := a.Lookup(x.Path)
		if err != nil {
			t.Fatal(err)
		}
		if sha(readAll(t, a, f)) != x.SHA256 {
			t.Errorf("%s: bytes differ", x.Path)
		}
	}
	got := allDirs(t, a)
	if len(got) != len(e.Dirs) {
		t.Fatalf("%d dirs, want %d", len(got), len(e.Dirs))
	}
	for i, x := range e.Dirs {
		want := x.dir()
		if !explicit[x.Path] {
			want.HasMtime, want.MtimeNs = false, 0 // barecat's trigger time; NULL in a bulk load
		}
		if got[i] != want {
			t.Errorf("dir %d:\n got %+v\nwant %+v", i, got[i], want)
		}
	}
	checkVerify(t, a)
}

// TestWriterRoundTrip writes many files of random sizes (empty ones too)
// under nested and unicode names, with a shard limit small enough to
// make many shards, reopens the archive and compares everything, the
// directory counters against a count made here.
func TestWriterRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	const limit = 4000
	type entry struct {
		f    File
		data []byte
	}
	var entries []entry
	names := []string{"a", "b/c", "b/c/d", "ünï/cödé", "日本/語", "x y/z", "deep/1/2/3/4/5/6"}
	for i := range 300 {
		size := rng.IntN(1500)
		if i%17 == 0 {
			size = 0
		}
		data := make([]byte, size)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		f := File{Path: fmt.Sprintf("%s/file%03d.bin", names[i%len(names)], i), Size: int64(size)}
		if i%3 != 0 {
			f.Mode, f.HasMode = 0o100644, true
			f.UID, f.HasUID = int64(i), true
			f.GID, f.HasGID = int64(2*i), true
			f.MtimeNs, f.HasMtime = 1700000000_000000000+int64(i), true
		}
		entries = append(entries, entry{f, data})
	}
	// The top-level names too, and an explicit empty directory.
	entries = append(entries, entry{File{Path: "top.txt", Size: 3}, []byte("top")})
	out := filepath.Join(t.TempDir(), "rt.barecat")
	w, err := Create(out, WriterOptions{ShardSizeLimit: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i, e := range entries {
		f := e.f
		if i%5 == 0 {
			f.Path = "./" + strings.ReplaceAll(f.Path, "/", "//") // normalized by Add
		}
		if err := w.Add(f, iotest.HalfReader(bytes.NewReader(e.data))); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []Dir{
		{Path: "empty/dir", Mode: 0o40700, HasMode: true, MtimeNs: 5, HasMtime: true},
		{Path: "b", UID: 7, HasUID: true, GID: 8, HasGID: true},
		{Path: ""},
	} {
		if err := w.AddDir(d); err != nil {
			t.Fatal(err)
		}
	}
	if w.NumFiles() != int64(len(entries)) {
		t.Fatalf("NumFiles %d", w.NumFiles())
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	a := mustOpen(t, out)
	if len(a.ShardPaths()) < 50 {
		t.Fatalf("only %d shards", len(a.ShardPaths()))
	}
	for i, s := range a.ShardSizes() {
		if s > limit || s == 0 {
			t.Errorf("shard %d has %d bytes", i, s)
		}
	}
	files := allFiles(t, a, ByPath)
	if len(files) != len(entries) {
		t.Fatalf("%d files, want %d", len(files), len(entries))
	}
	byPath := map[string]File{}
	for _, f := range files {
		byPath[f.Path] = f
	}
	type stats struct{ subdirs, files, filesTree, sizeTree int64 }
	want := map[string]*stats{"": {}}
	var dirOf func(p string) *stats
	dirOf = func(p string) *stats {
		if s := want[p]; s != nil {
			return s
		}
		want[p] = &stats{}
		i := strings.LastIndexByte(p, '/')
		par := ""
		if i >= 0 {
			par = p[:i]
		}
		dirOf(par).subdirs++
		return want[p]
	}
	dirOf("empty/dir")
	for _, e := range entries {
		f, ok := byPath[e.f.Path]
		if !ok {
			t.Fatalf("%s missing", e.f.Path)
		}
		wantF := e.f
		wantF.Shard, wantF.Offset = f.Shard, f.Offset
		wantF.CRC32C, wantF.HasCRC = crc32.Checksum(e.data, castagnoli), true
		if f != wantF {
			t.Errorf("\n got %+v\nwant %+v", f, wantF)
		}
		if !bytes.Equal(readAll(t, a, f), e.data) {
			t.Errorf("%s: bytes differ", f.Path)
		}
		p := e.f.Path
		dirOf(parentOf(p)).files++
		for d := parentOf(p); ; d = parentOf(d) {
			dirOf(d).filesTree++
			dirOf(d).sizeTree += e.f.Size
			if d == "" {
				break
			}
		}
	}
	dirs := allDirs(t, a)
	if len(dirs) != len(want) {
		t.Errorf("%d dirs, want %d", len(dirs), len(want))
	}
	for _, d := range dirs {
		s := want[d.Path]
		if s == nil {
			t.Errorf("unexpected dir %q", d.Path)
			continue
		}
		if d.NumSubdirs != s.subdirs || d.NumFiles != s.files || d.NumFilesTree != s.filesTree || d.SizeTree != s.sizeTree {
			t.Errorf("dir %q: %+v, want %+v", d.Path, d, *s)
		}
		switch d.Path {
		case "empty/dir":
			if !d.HasMode || d.Mode != 0o40700 || d.HasUID || !d.HasMtime || d.MtimeNs != 5 {
				t.Errorf("dir %q metadata %+v", d.Path, d)
			}
		case "b":
			if d.HasMode || d.UID != 7 || d.GID != 8 || d.HasMtime {
				t.Errorf("dir %q metadata %+v", d.Path, d)
			}
		default: // the root's was set to all NULL; the others are implicit
			if d.HasMode || d.HasUID || d.HasGID || d.HasMtime {
				t.Errorf("dir %q metadata %+v", d.Path, d)
			}
		}
	}
	want0, err := os.ReadFile(filepath.Join(confDir(t, "basic"), "schema_dump.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if schemaDump(t, out) != string(want0) {
		t.Errorf("schema differs from barecat's")
	}
	checkVerify(t, a)
}

// TestWriterThenBarecatAppends makes changes the way barecat makes them
// once the Writer is done (triggers on, as barecat connects), and checks
// that the triggers keep the counters right: the Writer left a working
// trigger setup and an index SQLite agrees with.
func TestWriterThenBarecatAppends(t *testing.T) {
	out := filepath.Join(t.TempDir(), "app.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, p := range []string{"a/b/one", "a/two", "three"} {
		if err := w.Add(File{Path: p, Size: int64(len(p))}, strings.NewReader(p)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	shard := ShardPath(out, 0)
	sf, err := os.OpenFile(shard, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	sf.WriteString("fresh")
	sf.Close()
	crc := crc32.Checksum([]byte("fresh"), castagnoli)
	execSQL(t, out,
		"PRAGMA recursive_triggers = ON",
		"PRAGMA foreign_keys = ON",
		fmt.Sprintf("INSERT INTO files (path, shard, offset, size, crc32c) VALUES ('a/new/dir/f', 0, 17, 5, %d)", crc),
		"DELETE FROM files WHERE path = 'a/two'",
		"UPDATE files SET path = 'moved' WHERE path = 'three'",
	)
	a := mustOpen(t, out)
	checkVerify(t, a)
	var got []string
	for _, d := range allDirs(t, a) {
		got = append(got, fmt.Sprintf("%s:%d/%d/%d/%d", d.Path, d.NumSubdirs, d.NumFiles, d.NumFilesTree, d.SizeTree))
	}
	want := []string{":1/1/3/17", "a:2/0/2/12", "a/b:0/1/1/7", "a/new:1/0/1/5", "a/new/dir:0/1/1/5"}
	if !slices.Equal(got, want) {
		t.Errorf("dirs %q, want %q", got, want)
	}
	// The triggers refuse a file where a directory is, as barecat relies on.
	db := openSQL(t, out, false)
	defer db.Close()
	if _, err := db.Exec("INSERT INTO files (path, shard, offset, size) VALUES ('a/b', 0, 0, 0)"); err == nil ||
		!strings.Contains(err.Error(), "Path already exists as directory") {
		t.Errorf("a file over a directory: %v", err)
	}
}

// TestWriterErrors checks the typed errors for what the Writer refuses,
// and that the Writer stays usable after them.
func TestWriterErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "err.barecat")
	w, err := Create(out, WriterOptions{ShardSizeLimit: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	add := func(p string, size int) error {
		return w.Add(File{Path: p, Size: int64(size)}, bytes.NewReader(make([]byte, size)))
	}
	for _, p := range []string{"a/b", "c", "dir/x"} {
		if err := add(p, 10); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddDir(Dir{Path: "made/dir"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  error
		kind error
	}{
		{"absolute", add("/etc/passwd", 1), ErrInvalidPath},
		{"dotdot", add("a/../../x", 1), ErrInvalidPath},
		{"nul", add("a\x00b", 1), ErrInvalidPath},
		{"utf8", add("a\xffb", 1), ErrInvalidPath},
		{"root", add("./", 1), ErrInvalidPath},
		{"duplicate", add("c", 1), ErrDuplicate},
		{"duplicate normalized", add("./a//b/", 1), ErrDuplicate},
		{"file where a dir is", add("a", 1), ErrConflict},
		{"file where an explicit dir is", add("made", 1), ErrConflict},
		{"file under a file", add("c/d", 1), ErrConflict},
		{"dir where a file is", w.AddDir(Dir{Path: "c"}), ErrConflict},
		{"dir under a file", w.AddDir(Dir{Path: "c/sub"}), ErrConflict},
		{"dir twice", w.AddDir(Dir{Path: "made/dir"}), ErrDuplicate},
		{"too large", add("big", 101), ErrTooLarge},
		{"negative size", w.Add(File{Path: "neg", Size: -1}, strings.NewReader("")), ErrCorrupt},
		{"external, no such shard", w.AddExternal(File{Path: "e1", Shard: 5, Size: 1}), ErrMissingShard},
		{"external, past the end", w.AddExternal(File{Path: "e2", Shard: 0, Offset: 25, Size: 6}), ErrBounds},
	} {
		t.Run(c.name, func(t *testing.T) { wantErr(t, c.err, c.kind) })
	}
	// Still usable: an external row into our own shard, then more files.
	if err := w.AddExternal(File{Path: "same-bytes-as-c", Shard: 0, Offset: 10, Size: 10}); err != nil {
		t.Fatal(err)
	}
	if err := add("d", 100); err != nil { // does not fit after 30 bytes: shard 1
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, out)
	if n, _ := a.NumFiles(); n != 5 || len(a.ShardPaths()) != 2 {
		t.Fatalf("%d files, %d shards", n, len(a.ShardPaths()))
	}
	checkVerify(t, a)
	if err := w.Add(File{Path: "late"}, nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
}

// TestWriterShortData: data that ends early is a sticky error, and the
// archive is not created.
func TestWriterShortData(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "short.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(File{Path: "ok", Size: 2}, strings.NewReader("ok")); err != nil {
		t.Fatal(err)
	}
	wantErr(t, w.Add(File{Path: "short", Size: 10}, strings.NewReader("abc")), ErrShortData)
	wantErr(t, w.Add(File{Path: "next", Size: 1}, strings.NewReader("n")), ErrShortData)
	wantErr(t, w.Close(), ErrShortData)
	failing := errors.New("disk on fire")
	w2, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w2.Add(File{Path: "x", Size: 5}, iotest.ErrReader(failing)); !errors.Is(err, failing) {
		t.Fatalf("reader error: %v", err)
	}
	w2.Abort()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left behind: %v", ents)
	}
}

// TestWriterNothingPartial: before Close nothing has the archive's names;
// Abort removes every temporary file; an existing archive is refused, or
// replaced with Overwrite (its extra shards removed).
func TestWriterNothingPartial(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "p.barecat")
	tarPath := filepath.Join(dir, "t.tar")
	if err := os.WriteFile(tarPath, make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(out, WriterOptions{ShardSizeLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if err := w.Add(File{Path: fmt.Sprint(i), Size: 8}, bytes.NewReader(make([]byte, 8))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.LinkShard(tarPath); err != nil {
		t.Fatal(err)
	}
	names := func() []string {
		var ns []string
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			ns = append(ns, e.Name())
		}
		return ns
	}
	for _, n := range names() {
		if strings.HasPrefix(n, "p.barecat") {
			t.Fatalf("%s exists before Close", n)
		}
	}
	w.Abort()
	if ns := names(); !slices.Equal(ns, []string{"t.tar"}) {
		t.Fatalf("after Abort: %q", ns)
	}

	// A first archive of 5 shards, then one of 2 over it.
	w, _ = Create(out, WriterOptions{ShardSizeLimit: 10})
	for i := range 5 {
		w.Add(File{Path: fmt.Sprint(i), Size: 8}, bytes.NewReader(make([]byte, 8)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = Create(out, WriterOptions{})
	if !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create over an archive: %v", err)
	}
	w, err = Create(out, WriterOptions{ShardSizeLimit: 10, Overwrite: true})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		w.Add(File{Path: "new" + fmt.Sprint(i), Size: 8}, bytes.NewReader(make([]byte, 8)))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"p.barecat", "p.barecat-shard-00000", "p.barecat-shard-00001", "t.tar"}
	if ns := names(); !slices.Equal(ns, want) {
		t.Fatalf("after Overwrite: %q, want %q", ns, want)
	}
	a := mustOpen(t, out)
	if n, _ := a.NumFiles(); n != 2 {
		t.Fatalf("%d files", n)
	}
	for _, n := range want[:3] {
		st, _ := os.Stat(filepath.Join(dir, n))
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s has mode %v", n, st.Mode())
		}
	}
}

// TestWriterEmpty: an archive without files has the root row, an empty
// shard 00000, and barecat's empty schema (no sqlite_stat1).
func TestWriterEmpty(t *testing.T) {
	out := filepath.Join(t.TempDir(), "e.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, out)
	if st := a.ShardSizes(); len(st) != 1 || st[0] != 0 {
		t.Fatalf("shards %v", st)
	}
	dirs := allDirs(t, a)
	if len(dirs) != 1 || dirs[0].Path != "" || !dirs[0].HasMtime || dirs[0].HasMode {
		t.Fatalf("dirs %+v", dirs)
	}
	if os.Getuid() >= 0 && (!dirs[0].HasUID || dirs[0].UID != int64(os.Getuid())) {
		t.Errorf("root uid %+v", dirs[0])
	}
	dump, err := os.ReadFile(filepath.Join(confDir(t, "empty"), "schema_dump.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if schemaDump(t, out) != string(dump) {
		t.Errorf("schema differs from barecat's empty archive")
	}
	checkVerify(t, a)
}

// TestWriterLargeFile copies a file larger than the copy buffer.
func TestWriterLargeFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "l.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, copyBufSize*2+12345)
	for i := range data {
		data[i] = byte(i * 31 >> 5)
	}
	if err := w.Add(File{Path: "small", Size: 3}, strings.NewReader("abc")); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(File{Path: "big", Size: int64(len(data))}, io.MultiReader(bytes.NewReader(data[:5]), bytes.NewReader(data[5:]))); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, out)
	f, err := a.Lookup("big")
	if err != nil {
		t.Fatal(err)
	}
	if f.Offset != 3 || f.CRC32C != crc32.Checksum(data, castagnoli) || !bytes.Equal(readAll(t, a, f), data) {
		t.Fatalf("big: %+v", f)
	}
}

func TestNormalizePath(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a/b", "a/b"},
		{"./a/b", "a/b"},
		{"a//b/", "a/b"},
		{"a/./b/.", "a/b"},
		{".", ""},
		{"", ""},
		{"./", ""},
		{"a/.../b", "a/.../b"},
		{"..a/b..", "..a/b.."},
		{"ünï/日本", "ünï/日本"},
		{"/a", "!"},
		{"a/../b", "!"},
		{"..", "!"},
		{"a\x00", "!"},
		{"\xc3\x28", "!"},
	} {
		got, err := NormalizePath(c.in)
		if c.want == "!" {
			if !errors.Is(err, ErrInvalidPath) {
				t.Errorf("NormalizePath(%q) = %q, %v; want ErrInvalidPath", c.in, got, err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("NormalizePath(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

// TestSQLParent checks the Go version of the schema's parent expression,
// which the Writer puts in the indexes over parent, against SQLite's
// own, invalid UTF-8 and NUL bytes included.
func TestSQLParent(t *testing.T) {
	uri, err := sqliteuri.File(filepath.Join(t.TempDir(), "p.db"), "")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open(driverName, uri)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema := strings.ReplaceAll(parentExpr, "path", "?1")
	for _, p := range []string{"", "a", "a/b", "a/b/c.txt", "a//b", "a/b/", "/a", "//", "ü/日本/x", "a/\xff\xfe/b",
		"\xc3/\x80", "\x80/\xc3", "a/b\x00c", "a\x00/b", "\xe6\x97/x", "x/\xf0\x9f\x98", "ü/\x00ü/ü"} {
		var want []byte
		if err := db.QueryRow(`SELECT CAST(`+schema+` AS BLOB)`, p).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if sqlParent(p) != string(want) {
			t.Errorf("parent of %q: SQLite %q, sqlParent %q", p, want, sqlParent(p))
		}
	}
}

func checkConfig(t *testing.T, index string, want map[string]int64) {
	t.Helper()
	db := openSQL(t, index, true)
	defer db.Close()
	rows, err := db.Query(`SELECT key, value_text, value_int FROM config`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[string]int64{}
	for rows.Next() {
		var k string
		var txt *string
		var v int64
		if err := rows.Scan(&k, &txt, &v); err != nil {
			t.Fatal(err)
		}
		if txt != nil {
			t.Errorf("config %s has value_text %q", k, *txt)
		}
		got[k] = v
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("config %v, want %v", got, want)
	}
}

// checkVerify runs Verify, which also runs SQLite's integrity check: it
// would see an index whose entries disagree with the restored schema.
func checkVerify(t *testing.T, a *Archive) {
	t.Helper()
	rep, err := a.Verify(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() {
		for _, p := range rep.Problems {
			t.Error(p)
		}
	}
}
