package barecat_test

import (
	"archive/tar"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/barecat"

	_ "modernc.org/sqlite"
)

// The Writer's index is laid out by formats/sqlitefile, not inserted row
// by row through SQLite as it was: its bytes differ, its rows must not.
// testdata/sameindex holds, for each archive below, every row of every
// table, the schema, sqlite_stat1 and the answers to the queries
// barecat's reader makes, as the SQLite-inserting Writer wrote them
// (BARECAT_SAMEINDEX_WRITE=1 writes them anew, from whatever Writer this
// is built with); TestWriterSameIndex compares the Writer's with them.

// sameIndexCases are the archives: written through the Writer's API,
// through TarToBarecat (duplicate policies, hard links, shard limits),
// and from the conformance archives.
var sameIndexCases = []struct {
	name  string
	write func(t *testing.T, out string) error
	// stat: sqlite_stat1 is compared with the golden one; otherwise
	// (tables of more than SQLite's analysis_limit, 1000 rows, whose
	// figures SQLite's ANALYZE sampled) with an ANALYZE of the whole.
	stat bool
}{
	{"api", writeAPI, true},
	{"api_shards", func(t *testing.T, out string) error { return writeMany(t, out, 30, 1100, 0) }, false},
	{"api_many", func(t *testing.T, out string) error { return writeMany(t, out, 0, 1200, 1) }, false},
	{"tar_first", func(t *testing.T, out string) error { return writeTar(t, out, convert.DuplicateFirst, 0) }, true},
	{"tar_last", func(t *testing.T, out string) error { return writeTar(t, out, convert.DuplicateLast, 700) }, true},
	{"tar_wrap", func(t *testing.T, out string) error { return writeTarWrap(t, out) }, true},
	{"conf_basic", func(t *testing.T, out string) error { return rewrite(t, "basic", out) }, true},
	{"conf_cli_create", func(t *testing.T, out string) error { return rewrite(t, "cli_create", out) }, true},
	{"conf_multishard", func(t *testing.T, out string) error { return rewrite(t, "multishard", out) }, true},
	{"conf_empty", func(t *testing.T, out string) error { return rewrite(t, "empty", out) }, true},
}

func TestWriterSameIndex(t *testing.T) {
	regen := os.Getenv("BARECAT_SAMEINDEX_WRITE") != ""
	for _, c := range sameIndexCases {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), c.name+".barecat")
			if err := c.write(t, out); err != nil {
				t.Fatal(err)
			}
			got := indexDump(t, out, c.stat)
			golden := filepath.Join("testdata", "sameindex", c.name+".txt")
			if regen {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if want := string(b); got != want {
				gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
				for i := range min(len(gl), len(wl)) {
					if gl[i] != wl[i] {
						t.Fatalf("line %d:\n got %.300s\nwant %.300s", i+1, gl[i], wl[i])
					}
				}
				t.Fatalf("%d lines, want %d", len(gl), len(wl))
			}
			if !c.stat {
				sameStatAsAnalyze(t, out)
			}
			if cli, err := exec.LookPath("sqlite3"); err == nil {
				b, err := exec.Command(cli, "-readonly", out, "PRAGMA integrity_check").CombinedOutput()
				if err != nil || strings.TrimSpace(string(b)) != "ok" {
					t.Fatalf("sqlite3 integrity_check: %v: %s", err, b)
				}
			}
		})
	}
}

// indexDump is every row of every table of the index (the root's uid,
// gid and mtime but where AddDir gave them: the writing process's and
// the time it started), the schema, integrity_check, sqlite_stat1 (if
// stat), and the answers of barecat's reader's queries, one per line.
func indexDump(t *testing.T, index string, stat bool) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+index+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var b strings.Builder
	queries := []string{
		`PRAGMA integrity_check`,
		`SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid`,
		`SELECT rowid, path, parent, shard, offset, size, crc32c, mode, uid, gid, mtime_ns FROM files ORDER BY rowid`,
		`SELECT rowid, path, parent, num_subdirs, num_files, num_files_tree, size_tree, mode,
			CASE WHEN path = '' AND uid = 4242 THEN uid WHEN path = '' THEN 'root' ELSE uid END,
			CASE WHEN path = '' AND uid = 4242 THEN gid WHEN path = '' THEN 'root' ELSE gid END,
			CASE WHEN path = '' AND uid = 4242 THEN mtime_ns WHEN path = '' THEN 'root' ELSE mtime_ns END FROM dirs ORDER BY rowid`,
		`SELECT key, value_text, value_int FROM config ORDER BY key`,
		// barecat's reader: listdir, the files and subdirectories of a
		// directory through the indexes on parent; a file by path; the
		// files by address; the counts.
		`SELECT d.path, (SELECT group_concat(path, ',') FROM (SELECT path FROM files WHERE parent = d.path ORDER BY path)),
			(SELECT group_concat(path, ',') FROM (SELECT path FROM dirs WHERE parent = d.path ORDER BY path)) FROM dirs AS d ORDER BY d.path`,
		`SELECT path, shard, offset, size, crc32c FROM files INDEXED BY idx_files_path WHERE path >= '' ORDER BY path`,
		`SELECT path FROM files INDEXED BY idx_files_shard_offset WHERE shard >= 0 ORDER BY shard, offset`,
		`SELECT count(*), sum(size) FROM files`,
		`SELECT num_files_tree, size_tree FROM dirs WHERE path = ''`,
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'sqlite_stat1'`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if stat && n > 0 {
		queries = append(queries, `SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid`)
	}
	for _, q := range queries {
		fmt.Fprintf(&b, "-- %s\n", strings.Join(strings.Fields(q), " "))
		rows, err := db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for i, v := range vals {
				if i > 0 {
					b.WriteByte('|')
				}
				if s, ok := v.([]byte); ok {
					v = string(s)
				}
				fmt.Fprintf(&b, "%q", fmt.Sprint(v))
			}
			b.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	return b.String()
}

// sameStatAsAnalyze checks sqlite_stat1 against SQLite's ANALYZE of a
// copy of the index, without an analysis_limit.
func sameStatAsAnalyze(t *testing.T, index string) {
	t.Helper()
	b, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	stat := func(path string, analyze bool) string {
		db, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if analyze {
			if _, err := db.Exec(`DELETE FROM sqlite_stat1; ANALYZE files; ANALYZE dirs`); err != nil {
				t.Fatal(err)
			}
		}
		var s []string
		rows, err := db.Query(`SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var a, b, c string
			rows.Scan(&a, &b, &c)
			s = append(s, a+" "+b+" "+c)
		}
		return strings.Join(s, "\n")
	}
	if got, want := stat(index, false), stat(cp, true); got != want {
		t.Fatalf("sqlite_stat1:\n%s\nANALYZE:\n%s", got, want)
	}
}

var rootDir = barecat.Dir{Path: "", Mode: 0o750, HasMode: true, UID: 4242, HasUID: true, GID: 7, HasGID: true, MtimeNs: 1e18, HasMtime: true}

// writeAPI writes files and directories through each of the Writer's
// calls: explicit directories before and after their files, nested and
// empty ones, hard links, files of no bytes, odd paths, a shard limit.
func writeAPI(t *testing.T, out string) error {
	w, err := barecat.Create(out, barecat.WriterOptions{ShardSizeLimit: 64})
	if err != nil {
		return err
	}
	defer w.Abort()
	meta := func(f barecat.File, i int) barecat.File {
		f.Mode, f.HasMode, f.UID, f.HasUID, f.GID, f.HasGID = int64(0o600+i%8), true, int64(1000+i), i%3 == 0, 100, true
		f.MtimeNs, f.HasMtime = int64(i)*1e9+17, i%2 == 0
		return f
	}
	if err := w.AddDir(barecat.Dir{Path: "a/b", Mode: 0o700, HasMode: true, MtimeNs: 5, HasMtime: true}); err != nil {
		return err
	}
	paths := []string{"a/b/c.txt", "a/b/d.txt", "a/x.bin", "a-b/y", "a/b/e/f/g.txt", "z", "ü/日本/x.jpg",
		"a/b/empty0", "a/b/empty1", "dir with space/f", "a.b/c", "a/b!", "k/l/m/n/o/p", "a/b/c2.txt"}
	for i, p := range paths {
		data := strings.Repeat(string(rune('a'+i)), i*3%23)
		if strings.Contains(p, "empty") {
			data = ""
		}
		if err := w.Add(meta(barecat.File{Path: p, Size: int64(len(data))}, i), strings.NewReader(data)); err != nil {
			return err
		}
	}
	if _, err := w.AddLink(meta(barecat.File{Path: "links/l1"}, 99), "a/x.bin"); err != nil {
		return err
	}
	if err := w.AddBytes(meta(barecat.File{Path: "bytes/one", Size: 5}, 3), []byte("12345"), 0xcbf43926); err != nil {
		return err
	}
	for _, d := range []barecat.Dir{{Path: "empty/deep/er", Mode: 0o755, HasMode: true}, {Path: "a", UID: 5, HasUID: true}, rootDir} {
		if err := w.AddDir(d); err != nil {
			return err
		}
	}
	return w.Close()
}

// writeMany writes n files in dirs directories (and a few explicit
// ones), under a shard limit of limit bytes (0: none).
func writeMany(t *testing.T, out string, dirs, n int, limit int64) error {
	w, err := barecat.Create(out, barecat.WriterOptions{ShardSizeLimit: limit * 40})
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := w.AddDir(rootDir); err != nil {
		return err
	}
	for i := range n {
		p := fmt.Sprintf("f%05d", (i*7919)%n)
		if dirs > 0 {
			p = fmt.Sprintf("d%02d/s%d/f%05d", (i*13)%dirs, i%3, i)
		}
		data := strings.Repeat("x", i%9)
		if err := w.Add(barecat.File{Path: p, Size: int64(len(data)), MtimeNs: int64(i), HasMtime: true}, strings.NewReader(data)); err != nil {
			return err
		}
		if dirs > 0 && i%400 == 0 {
			if err := w.AddDir(barecat.Dir{Path: fmt.Sprintf("d%02d", i%dirs), Mode: 0o711, HasMode: true}); err != nil && !strings.Contains(err.Error(), "twice") {
				return err
			}
		}
	}
	return w.Close()
}

// tarShards writes two tar shards with directories, files, repeated
// paths, hard links and a symlink.
func tarShards(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	mod := time.Unix(1700000000, 123)
	for s := range 2 {
		p := filepath.Join(dir, fmt.Sprintf("s%d.tar", s))
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		tw := tar.NewWriter(f)
		hdr := func(h *tar.Header, data string) {
			h.ModTime, h.Uid, h.Gid, h.Format = mod.Add(time.Duration(len(paths))*time.Second), 1000+s, 100, tar.FormatPAX
			if h.Mode == 0 {
				h.Mode = 0o644
			}
			h.Size = int64(len(data))
			if h.Typeflag != tar.TypeReg {
				h.Size = 0
			}
			if err := tw.WriteHeader(h); err != nil {
				t.Fatal(err)
			}
			if h.Size > 0 {
				tw.Write([]byte(data))
			}
		}
		hdr(&tar.Header{Name: "data/", Typeflag: tar.TypeDir, Mode: 0o755}, "")
		for i := range 120 {
			name := fmt.Sprintf("data/%03d/sample%04d.jpg", i%7, s*1000+i)
			if i%10 == 4 {
				name = fmt.Sprintf("data/%03d/sample%04d.jpg", (i-1)%7, i-1) // repeated
			}
			hdr(&tar.Header{Name: name, Typeflag: tar.TypeReg}, strings.Repeat(fmt.Sprint(i%10), i%31))
			if i%25 == 0 {
				hdr(&tar.Header{Name: name + ".link", Typeflag: tar.TypeLink, Linkname: name}, "")
			}
		}
		hdr(&tar.Header{Name: "data/sym", Typeflag: tar.TypeSymlink, Linkname: "x"}, "")
		hdr(&tar.Header{Name: "./top.txt", Typeflag: tar.TypeReg}, fmt.Sprint("top", s))
		if err := tw.Close(); err != nil {
			t.Fatal(err)
		}
		f.Close()
		paths = append(paths, p)
	}
	return paths
}

func writeTar(t *testing.T, out, policy string, limit int64) error {
	_, err := convert.TarToBarecat(context.Background(), tarShards(t), out, convert.BarecatOptions{OnDuplicate: policy, ShardSize: limit, Workers: 2})
	return err
}

func writeTarWrap(t *testing.T, out string) error {
	dir := filepath.Dir(out)
	shards := tarShards(t)
	var local []string
	for _, s := range shards {
		b, err := os.ReadFile(s)
		if err != nil {
			return err
		}
		p := filepath.Join(dir, filepath.Base(s))
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		local = append(local, p)
	}
	_, err := convert.TarToBarecat(context.Background(), local, out, convert.BarecatOptions{Wrap: true, CRC: true, OnDuplicate: convert.DuplicateLast, Workers: 2})
	return err
}

// rewrite writes a conformance archive's files and directories anew, in
// the order barecat added them (by address).
func rewrite(t *testing.T, name, out string) error {
	src := filepath.Join("testdata", "conformance", "barecat", name)
	dir := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	a, err := barecat.Open(filepath.Join(dir, name+".barecat"))
	if err != nil {
		return err
	}
	defer a.Close()
	limit := a.ShardSizeLimit()
	if limit == barecat.UnlimitedShardSize {
		limit = 0
	}
	w, err := barecat.Create(out, barecat.WriterOptions{ShardSizeLimit: limit})
	if err != nil {
		return err
	}
	defer w.Abort()
	err = a.Files(context.Background(), barecat.ByAddress, func(f barecat.File) error {
		r, err := a.Open(f)
		if err != nil {
			return err
		}
		return w.Add(f, r)
	})
	if err != nil {
		return err
	}
	err = a.Dirs(context.Background(), func(d barecat.Dir) error {
		if d.Path == "" {
			d = rootDir
		}
		if d.Path != "" && !d.HasMode && !d.HasUID {
			return nil
		}
		return w.AddDir(d)
	})
	if err != nil {
		return err
	}
	return w.Close()
}
