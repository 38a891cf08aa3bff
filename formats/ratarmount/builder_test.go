package ratarmount

import (
	"bytes"
	"database/sql"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// index builds the index of a testdata shard in memory.
func index(t *testing.T, shard string) *Index {
	t.Helper()
	shard = filepath.Join("testdata", shard)
	fi, err := os.Stat(shard)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := build(t, shard).Index(fi)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// find returns the rows named path/name.
func find(ix *Index, path, name string) []File {
	var out []File
	for _, f := range ix.Files {
		if f.Path == path && f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

const (
	d60 = "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
	e60 = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"
)

// TestRows: the rows of the awkward members, value by value (the same
// values ratarmount wrote; TestOracle compares everything).
func TestRows(t *testing.T) {
	reg := func(path, name string, oh, off, size int64) File {
		return File{Path: path, Name: name, OffsetHeader: oh, Offset: off, Size: size, MTime: 1577836800, Mode: 0o100644, Type: '0'}
	}
	gen := func(path, name string, oh, off int64) File {
		return File{Path: path, Name: name, OffsetHeader: oh, Offset: off, Mode: 0o40555, Type: '5'}
	}
	for _, tt := range []struct {
		shard string
		want  []File // rows expected, each at most once by (path, name, offsetheader)
	}{
		{"dirs_links_gnutar/train_0000.tar", []File{
			{Path: "", Name: "imgs", OffsetHeader: 0, Offset: 512, MTime: 1577836800, Mode: 0o40755, Type: '5'},
			{Path: "/imgs", Name: "s2.cls", OffsetHeader: 2560, Offset: 3072, MTime: 1577836800, Mode: 0o120755, Type: '2', Linkname: "s1.cls"},
			{Path: "/imgs", Name: "s3.jpg", OffsetHeader: 5120, Offset: 5632, MTime: 1577836800, Mode: 0o644, Type: '1', Linkname: "imgs/s1.jpg"},
			{Path: "/imgs", Name: "s4.pipe", OffsetHeader: 5632, Offset: 6144, MTime: 1577836800, Mode: 0o10644, Type: '6'},
		}},
		{"gnu_longname_py/train_0000.tar", []File{
			reg("/"+d60+"/"+e60, "short.jpg", 0, 1536, 188),
			reg("", strings.Repeat("L", 120)+".jpg", 2048, 3584, 194),
			{Path: "", Name: "short.lnk", OffsetHeader: 6144, Offset: 7680, MTime: 1577836800, Mode: 0o120644, Type: '2', Linkname: strings.Repeat("T", 150)},
			gen("", d60, 0, 1536),
			gen("/"+d60, e60, 0, 1536),
		}},
		{"pax_py/train_0000.tar", []File{
			reg("", "café.jpg", 1024, 2560, 136),
			reg("", "日本語.png", 5120, 6656, 242),
			reg("", "plain.jpg", 7168, 7680, 306),
			gen("", d60, 8192, 9728),
		}},
		{"ustar_prefix/train_0000.tar", []File{
			reg("/"+d60+"/"+e60, "p.jpg", 0, 512, 40),
			gen("/"+d60, e60, 0, 512),
		}},
		{"nested_dirs_gnutar/train_0000.tar", []File{
			{Path: "", Name: "", OffsetHeader: 0, Offset: 512, MTime: 1577836800, Mode: 0o40755, Type: '5'}, // "./"
			reg("/a/b", "x.jpg", 1536, 2048, 12),
		}},
		{"duplicates/train_0000.tar", []File{
			reg("", "a.jpg", 0, 512, 10),
			reg("", "a.jpg", 1024, 1536, 11),
			reg("", "b.jpg", 5120, 5632, 14),
		}},
		{"multidot_names/train_0000.tar", []File{
			reg("", "noext", 6144, 6656, 265),
			reg("", "trailingdot.", 7168, 7680, 38),
			reg("/d.x", "y.jpg", 12288, 12800, 208),
			gen("", "d.x", 12288, 12800),
		}},
		{"oddtypes/train_0000.tar", []File{
			{Path: "", Name: "aregfile.txt", OffsetHeader: 0, Offset: 512, Size: 5, MTime: 1577836800, Mode: 0o100644, Type: 0},
			{Path: "", Name: "v7dir", OffsetHeader: 1024, Offset: 1536, MTime: 1577836800, Mode: 0o40755, Type: '5'},
			reg("", "fullmode.bin", 2560, 3072, 5),
			{Path: "", Name: "chardev", OffsetHeader: 3584, Offset: 4096, MTime: 1577836800, Mode: 0o20620, Type: '3'},
			{Path: "", Name: "blockdev", OffsetHeader: 4096, Offset: 4608, MTime: 1577836800, Mode: 0o660, Type: '4'},
			{Path: "", Name: "hardlink", OffsetHeader: 6144, Offset: 6656, Size: 5, MTime: 1577836800, Mode: 0o644, Type: '1', Linkname: "aregfile.txt"},
			{Path: "", Name: "dirsize", OffsetHeader: 6656, Offset: 7168, Size: 512, MTime: 1577836800, Mode: 0o40755, Type: '5'},
			{Path: "", Name: "volume", OffsetHeader: 7168, Offset: 7680, Size: 3, MTime: 1577836800, Mode: 0o644, Type: 'V'},
			reg("", "escape.txt", 8192, 8704, 4),
			reg("/dot/slash", "name.txt", 9216, 9728, 5),
			reg("/13666753432", "gnutimes.txt", 15360, 15872, 4),
			gen("", "shadow", 12800, 13312), // beside the regular file "shadow"
		}},
		{"paxmeta/train_0000.tar", []File{
			{Path: "", Name: "plain.txt", OffsetHeader: 1024, Offset: 1536, Size: 6, MTime: 1600000000, Mode: 0o100644, Type: '0'},
			{Path: "", Name: "frac.txt", OffsetHeader: 2048, Offset: 3584, Size: 5, MTime: 1577836800.123456789, Mode: 0o100644, Type: '0'},
			{Path: "", Name: "neg.txt", OffsetHeader: 4096, Offset: 5632, Size: 4, MTime: -1.5, Mode: 0o100644, Type: '0'},
			{Path: "", Name: "bigid.txt", OffsetHeader: 6144, Offset: 7680, Size: 4, MTime: 1600000000, Mode: 0o100644, Type: '0', UID: 3000000000, GID: 4000000000},
			{Path: "", Name: "", OffsetHeader: 8192, Offset: 9728, Size: 10, MTime: 1600000000, Mode: 0o100644, Type: '0'}, // path=""
			{Path: "", Name: "emptylink", OffsetHeader: 10240, Offset: 11776, MTime: 1600000000, Mode: 0o120777, Type: '2'},
			{Path: "", Name: "second.txt", OffsetHeader: 13824, Offset: 15360, Size: 4, MTime: 1600000000, Mode: 0o100644, Type: '0'},
		}},
		{"paxglobal/train_0000.tar", []File{
			{Path: "", Name: "global-name.txt", OffsetHeader: 1024, Offset: 1536, Size: 2, MTime: 1577836800, Mode: 0o100644, Type: '0', Linkname: "global-target", UID: 77},
			{Path: "/long", Name: strings.Repeat("l", 100) + ".txt", OffsetHeader: 2048, Offset: 3584, Size: 2, MTime: 1577836800, Mode: 0o100644, Type: '0', Linkname: "global-target", UID: 77},
			{Path: "", Name: "global-name.txt", OffsetHeader: 6144, Offset: 8704, Size: 2, MTime: 1600000001, Mode: 0o100644, Type: '0', Linkname: "global-target", UID: 77},
			{Path: "", Name: "global-name.txt", OffsetHeader: 9728, Offset: 11264, MTime: 1577836800, Mode: 0o120777, Type: '2', Linkname: strings.Repeat("k", 120), UID: 77},
			{Path: "", Name: "own-name.txt", OffsetHeader: 12288, Offset: 13824, Size: 2, MTime: 1577836800, Mode: 0o100644, Type: '0', Linkname: "global-target", UID: 88},
		}},
		{"badutf8/train_0000.tar", []File{
			reg("", `bad\xff.txt`, 0, 512, 3),
			reg(`/d\xe9r`, `f\xc3.txt`, 1024, 1536, 11),
			reg("", `trunc\xe2\x82.txt`, 3072, 3584, 19),
			{Path: "", Name: "badlink", OffsetHeader: 5120, Offset: 5632, MTime: 1577836800, Mode: 0o120777, Type: '2', Linkname: `t\xfe`},
			reg(`/pax\xfe`, "bin.txt", 5632, 7168, 12),
			gen("", `d\xe9r`, 1024, 1536),
		}},
		{"sparse_gnutar/train_0000.tar", []File{{Path: "", Name: "holes.bin", Offset: 512, Size: 70010, MTime: 1577836800, Mode: 0o100644, Type: 'S', IsSparse: true}}},
		{"sparse_gnutar/train_0001.tar", []File{{Path: "", Name: "holes.bin", Offset: 1536, Size: 70010, MTime: 1577836800, Mode: 0o100644, Type: '0', IsSparse: true}}},
		{"sparse_gnutar/train_0002.tar", []File{{Path: "", Name: "holes.bin", Offset: 1536, Size: 70010, MTime: 1577836800, Mode: 0o100644, Type: '0', IsSparse: true}}},
		{"sparse_gnutar/train_0003.tar", []File{{Path: "", Name: "holes.bin", Offset: 2048, Size: 70010, MTime: 1577836800, Mode: 0o100644, Type: '0', IsSparse: true}}},
	} {
		ix := index(t, tt.shard)
		for _, w := range tt.want {
			found := false
			for _, g := range find(ix, w.Path, w.Name) {
				if g.OffsetHeader == w.OffsetHeader {
					found = true
					if g != w {
						t.Errorf("%s: row %s/%s at %d:\n got  %+v\n want %+v", tt.shard, w.Path, w.Name, w.OffsetHeader, g, w)
					}
				}
			}
			if !found {
				t.Errorf("%s: no row %q/%q at %d", tt.shard, w.Path, w.Name, w.OffsetHeader)
			}
		}
	}
}

// TestOrder: member rows in archive order, generated rows after them in
// (path, name) order; the root gets no generated row.
func TestOrder(t *testing.T) {
	ix := index(t, "oddtypes/train_0000.tar")
	var names []string
	for _, f := range ix.Files[len(ix.Files)-5:] {
		names = append(names, f.Path+"/"+f.Name)
	}
	if got := strings.Join(names, " "); got != "/13666753432 /abs /dot /shadow /dot/slash" {
		t.Errorf("generated rows %s", got)
	}
	for i, f := range ix.Files[:len(ix.Files)-5] {
		if i > 0 && f.OffsetHeader <= ix.Files[i-1].OffsetHeader {
			t.Errorf("row %d at %d after %d", i+1, f.OffsetHeader, ix.Files[i-1].OffsetHeader)
		}
	}
}

func TestXattrs(t *testing.T) {
	ix := index(t, "paxmeta/train_0000.tar")
	var got []string
	for _, x := range ix.XAttrs {
		if x.OffsetHeader == 11776 || x.OffsetHeader == 15872 {
			got = append(got, x.Key+"="+string(x.Value))
		}
	}
	want := "user.global=g1 user.comment=world security.selinux=system_u:object_r:tmp_t:s0\x00 user.Ab=hello user.global=g1 user.comment=again"
	if strings.Join(got, " ") != want {
		t.Errorf("xattrs %q\nwant %q", strings.Join(got, " "), want)
	}
	if n := len(ix.XAttrs); n != 15 {
		t.Errorf("%d xattrs, want 15 (user.global on every member)", n)
	}
}

// TestUnsupported: the members this package refuses, each with
// ErrUnsupported from Add and then from WriteTo.
func TestUnsupported(t *testing.T) {
	for _, tt := range []struct {
		name  string
		build func(a *archive)
		why   string
	}{
		{"GNU incremental", func(a *archive) {
			a.file(hdr{name: "dir/", typeflag: 'D', gnu: true}, "Yfile\x00\x00")
		}, "GNU incremental"},
		{"Solaris extended header", func(a *archive) {
			a.file(hdr{name: "x", typeflag: 'X'}, "10 uid=77\n")
			a.file(hdr{name: "f"}, "f")
		}, "Solaris"},
		{"global sparse record", func(a *archive) {
			a.pax('g', "GNU.sparse.map", "0,1")
			a.file(hdr{name: "f"}, "f")
		}, "GNU.sparse.map"},
		{"pax size Python skips differently", func(a *archive) {
			// The scanner takes the size record; tarfile with an empty one
			// reads a size of 0 and would look for the next header at the
			// payload.
			a.pax('x', "size", "")
			a.file(hdr{name: "f"}, strings.Repeat("x", 600))
		}, "next header"},
		{"sparse with a size record", func(a *archive) {
			// tarfile's size becomes GNU.sparse.size, the later record,
			// and it looks for the next header that far.
			a.pax('x', "size", "3", "GNU.sparse.major", "0", "GNU.sparse.minor", "1", "GNU.sparse.map", "0,3",
				"GNU.sparse.size", "4096")
			a.file(hdr{name: "f"}, "abc")
		}, "next header"},
		{"pax 1.0 sparse without the archive", func(a *archive) {
			a.pax('x', "GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.realsize", "4096", "GNU.sparse.name", "f")
			a.file(hdr{name: "GNUSparseFile.0/f"}, "1\n0\n3\n"+strings.Repeat("\x00", 506)+"abc")
		}, "Builder.Archive"},
		{"xattr not base64", func(a *archive) {
			a.pax('x', "LIBARCHIVE.xattr.user.x", "not base64!")
			a.file(hdr{name: "f"}, "f")
		}, "base64"},
		{"xattr name not UTF-8", func(a *archive) {
			a.pax('x', "SCHILY.xattr.user.\xff", "v")
			a.file(hdr{name: "f"}, "f")
		}, "not UTF-8"},
		{"pax mtime Python reads its own way", func(a *archive) {
			a.pax('g', "mtime", "1_600_000_000")
			a.file(hdr{name: "f"}, "f")
		}, "mtime"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var a archive
			tt.build(&a)
			a.Write(make([]byte, 1024))
			b, err := addAll(t, a.Bytes(), nil)
			if !errors.Is(err, ErrUnsupported) || !strings.Contains(err.Error(), tt.why) {
				t.Fatalf("Add: %v, want ErrUnsupported (%s)", err, tt.why)
			}
			if err2 := b.Add(nil); err2 != err {
				t.Errorf("Add after an error: %v", err2)
			}
			out := filepath.Join(t.TempDir(), "x.index.sqlite")
			if err := b.WriteTo(out, fakeInfo{size: int64(a.Len())}); !errors.Is(err, ErrUnsupported) {
				t.Errorf("WriteTo: %v", err)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("WriteTo created %s", out)
			}
		})
	}
}

// TestSparse10Map: a GNU pax 1.0 sparse member's data starts after its
// map, however many blocks the map takes.
func TestSparse10Map(t *testing.T) {
	for _, entries := range []int{1, 40, 100} {
		var m strings.Builder
		m.WriteString(strconv.Itoa(entries) + "\n")
		for i := range entries {
			m.WriteString(strconv.Itoa(i*8192) + "\n512\n")
		}
		mapBytes := pad([]byte(m.String()))
		data := string(mapBytes) + strings.Repeat("d", 512*entries)
		var a archive
		a.pax('x', "GNU.sparse.major", "1", "GNU.sparse.minor", "0", "GNU.sparse.realsize", strconv.Itoa(entries*8192), "GNU.sparse.name", "f")
		a.file(hdr{name: "GNUSparseFile.0/f"}, data)
		a.Write(make([]byte, 1024))
		b, err := addAll(t, a.Bytes(), bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		ix, err := b.Index(fakeInfo{size: int64(a.Len())})
		if err != nil {
			t.Fatal(err)
		}
		f := ix.Files[0]
		if want := int64(1536 + len(mapBytes)); f.Offset != want || f.Size != int64(entries*8192) || !f.IsSparse || f.Name != "f" {
			t.Errorf("%d entries: %+v, want offset %d", entries, f, want)
		}
	}
}

func TestWriteTo(t *testing.T) {
	shard := filepath.Join("testdata", "ustar_basic", "train_0000.tar")
	fi, err := os.Stat(shard)
	if err != nil {
		t.Fatal(err)
	}
	b := build(t, shard)
	dir := t.TempDir()

	// An existing empty file (a temporary file the caller created) is
	// fine; a non-empty one is refused and kept.
	empty := filepath.Join(dir, "empty.index.sqlite")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteTo(empty, fi); err != nil {
		t.Fatalf("WriteTo over an empty file: %v", err)
	}
	if ix, err := Read(empty); err != nil || len(ix.Files) != 6 {
		t.Fatalf("Read: %v", err)
	}
	if err := b.WriteTo(empty, fi); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("WriteTo over an index: %v", err)
	}
	if _, err := Read(empty); err != nil {
		t.Errorf("the existing index was damaged: %v", err)
	}

	// A builder can write twice (it holds rows, not a stream).
	again := filepath.Join(dir, "again.index.sqlite")
	if err := b.WriteTo(again, fi); err != nil {
		t.Fatal(err)
	}
	if a, b := dump(t, empty), dump(t, again); !equalDumps(a, b) {
		t.Errorf("two writes differ")
	}

	// No member: ErrEmpty, no file.
	var none Builder
	p := filepath.Join(dir, "none.index.sqlite")
	if err := none.WriteTo(p, fi); !errors.Is(err, ErrEmpty) {
		t.Errorf("WriteTo of no member: %v", err)
	}
	if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("WriteTo of no member created %s", p)
	}
	if _, err := none.Index(fi); !errors.Is(err, ErrEmpty) {
		t.Errorf("Index of no member: %v", err)
	}

	// A directory that does not exist.
	if err := b.WriteTo(filepath.Join(dir, "no", "such", "x.index.sqlite"), fi); err == nil {
		t.Errorf("WriteTo into a missing directory succeeded")
	}
}

func equalDumps(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := b[k]
		if len(v) != len(w) {
			return false
		}
		for i := range v {
			if v[i] != w[i] {
				return false
			}
		}
	}
	return true
}

// TestGenericTarStats: on a FileInfo without a stat(2) result, tarstats
// holds st_mode, st_mtime and st_size, which is what ratarmount reads.
func TestGenericTarStats(t *testing.T) {
	fi := fakeInfo{size: 10240, mtime: time.Unix(1795551582, 305478170)}
	got := tarStatsJSON(fi)
	want := `{"st_mode": 33188, "st_mtime": 1795551582.305478, "st_mtime_ns": 1795551582305478170, "st_size": 10240}`
	if got != want {
		t.Errorf("tarstats %s\nwant     %s", got, want)
	}
	ts, err := ParseTarStats(got)
	if err != nil || ts.Size != 10240 || ts.MTime != 1795551582.305478 || !ts.HasSize || !ts.HasMTime {
		t.Fatalf("ParseTarStats: %+v, %v", ts, err)
	}
	if err := ts.Check(fi, true); err != nil {
		t.Errorf("Check: %v", err)
	}
	if err := ts.Check(fakeInfo{size: 10752, mtime: fi.mtime}, false); !errors.Is(err, ErrStale) {
		t.Errorf("Check of a grown archive: %v", err)
	}
	later := fakeInfo{size: 10240, mtime: fi.mtime.Add(time.Microsecond)}
	if err := ts.Check(later, false); err != nil {
		t.Errorf("Check of a touched archive without verifyMTime: %v", err)
	}
	if err := ts.Check(later, true); !errors.Is(err, ErrStale) {
		t.Errorf("Check of a touched archive: %v", err)
	}
}

func TestParseTarStats(t *testing.T) {
	for _, s := range []string{"", "[]", "null", `{"st_size": "1"}`, `{"st_size": 1.5}`, `{"st_size": -1}`,
		`{"st_mtime": "x"}`, `{"st_size": 1} {}`, `{"st_mtime": 1e999}`} {
		if _, err := ParseTarStats(s); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseTarStats(%q): %v, want ErrFormat", s, err)
		}
	}
	ts, err := ParseTarStats(`{"st_atime": 1.0}`)
	if err != nil || ts.HasSize || ts.HasMTime {
		t.Errorf("ParseTarStats without size and mtime: %+v, %v", ts, err)
	}
}

// TestReadErrors: files that are not such an index are ErrFormat, naming
// the file and what is wrong.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	good, err := write(t, filepath.Join("testdata", "ustar_basic", "train_0000.tar"))
	if err != nil {
		t.Fatal(err)
	}
	variant := func(name string, stmts ...string) string {
		p := filepath.Join(dir, name)
		data, err := os.ReadFile(good)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", "file:"+p)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, s := range stmts {
			if _, err := db.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
		return p
	}
	text := filepath.Join(dir, "text")
	os.WriteFile(text, []byte("SQLite format 2\x00 and more"), 0o644)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("SQLite"), 0o644)
	for _, tt := range []struct {
		path, why string
	}{
		{text, "not an SQLite database"},
		{short, "not an SQLite database"},
		{filepath.Join("testdata", "ustar_basic", "train_0000.tar"), "not an SQLite database"},
		{variant("nofiles", `DROP TABLE files`), "no table files"},
		{variant("columns", `ALTER TABLE files DROP COLUMN recursiondepth`), "columns"},
		{variant("tmp", `CREATE TABLE filestmp (x)`), "did not finish"},
		{variant("parents", `CREATE TABLE parentfolders (x)`), "did not finish"},
		{variant("noversion", `DELETE FROM versions WHERE name = 'index'`), "no index version"},
		{variant("v05", `UPDATE versions SET version = '0.5.0', minor = 5 WHERE name = 'index'`), `index version "0.5.0"`},
		{variant("v1", `UPDATE versions SET version = '1.0.0', major = 1, minor = 0 WHERE name = 'index'`), `index version "1.0.0"`},
		{variant("backend", `UPDATE metadata SET value = 'SQLiteIndexedZip' WHERE key = 'backendName'`), "SQLiteIndexedZip"},
		{variant("tarstats", `UPDATE metadata SET value = '{' WHERE key = 'tarstats'`), "tarstats"},
		{variant("type", `UPDATE files SET type = 'xx' WHERE rowid = 2`), "row 2: type"},
		{variant("null", `UPDATE files SET offset = NULL WHERE rowid = 3`), "row 3: offset"},
	} {
		_, err := Read(tt.path)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), tt.why) || !strings.Contains(err.Error(), tt.path) {
			t.Errorf("Read(%s): %v, want ErrFormat (%s)", filepath.Base(tt.path), err, tt.why)
		}
	}
	if _, err := Read(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file: %v", err)
	}
	// Another index version of the same layout reads.
	if _, err := Read(variant("v06", `UPDATE versions SET version = '0.6.0', minor = 6 WHERE name = 'index'`)); err != nil {
		t.Errorf("Read of index 0.6.0: %v", err)
	}
}
