package barecat

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/sqliteuri"
)

// TestCorrupt breaks copies of conformance archives one way each and
// checks the typed error, at the step that must find it: Open, listing
// the files, reading one, or Verify (which lists it as a problem).
func TestCorrupt(t *testing.T) {
	type step int
	const (
		atOpen step = iota
		atFiles
		atRead
		atVerify
	)
	for _, c := range []struct {
		name   string
		base   string
		mutate func(t *testing.T, dir, index string)
		at     step
		kind   error
		file   string // the member concerned (atRead, atVerify), or the file on disk (atOpen) relative to dir
	}{
		{"missing shard 0", "basic", remove("basic.barecat-shard-00000"), atOpen, ErrMissingShard, "basic.barecat-shard-00000"},
		{"missing shard 3 of 7", "multishard", remove("multishard.barecat-shard-00003"), atOpen, ErrMissingShard, "multishard.barecat-shard-00003"},
		{"dangling symlink shard", "basic", func(t *testing.T, dir, index string) {
			p := filepath.Join(dir, "basic.barecat-shard-00000")
			os.Remove(p)
			if err := os.Symlink("gone.tar", p); err != nil {
				t.Fatal(err)
			}
		}, atOpen, ErrMissingShard, "basic.barecat-shard-00000"},
		{"shard out of range", "basic", sqls("UPDATE files SET shard = 9 WHERE path = 'a.txt'"), atOpen, ErrMissingShard, "basic.barecat-shard-00001"},
		{"not SQLite", "basic", write("basic.barecat", "this is not a database, just some text that is long enough"), atOpen, ErrFormat, "basic.barecat"},
		{"empty index", "basic", write("basic.barecat", ""), atOpen, ErrFormat, "basic.barecat"},
		{"SQLite header, garbage after", "basic", write("basic.barecat", sqliteMagic+strings.Repeat("\xff", 4000)), atOpen, ErrFormat, "basic.barecat"},
		{"no files table", "basic", sqls("DROP TABLE files"), atOpen, ErrFormat, "basic.barecat"},
		{"no config table", "basic", sqls("DROP TABLE config"), atOpen, ErrVersion, "basic.barecat"},
		{"major 1", "basic", sqls("UPDATE config SET value_int = 1 WHERE key = 'schema_version_major'"), atOpen, ErrVersion, "basic.barecat"},
		{"no major", "basic", sqls("DELETE FROM config WHERE key = 'schema_version_major'"), atOpen, ErrVersion, "basic.barecat"},
		{"text major", "basic", sqls("UPDATE config SET value_int = 'zero' WHERE key = 'schema_version_major'"), atOpen, ErrCorrupt, "basic.barecat"},
		{"no shard_size_limit", "basic", sqls("DELETE FROM config WHERE key = 'shard_size_limit'"), atOpen, ErrCorrupt, "basic.barecat"},
		{"no root directory", "basic", sqls("DELETE FROM dirs WHERE path = ''"), atOpen, ErrCorrupt, "basic.barecat"},
		{"zero shard_size_limit", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'shard_size_limit'"), atOpen, ErrCorrupt, "basic.barecat"},
		{"negative minor", "basic", sqls("UPDATE config SET value_int = -1 WHERE key = 'schema_version_minor'"), atOpen, ErrCorrupt, "basic.barecat"},
		{"text shard", "basic", sqls("UPDATE files SET shard = 'x' WHERE path = 'a.txt'"), atOpen, ErrCorrupt, "basic.barecat"},
		{"negative shard", "basic", sqls("UPDATE files SET shard = -1"), atOpen, ErrCorrupt, "basic.barecat"},
		{"signed crc", "basic", sqls("UPDATE files SET crc32c = crc32c - 4294967296 WHERE path = 'a.txt'"), atFiles, ErrCorrupt, "a.txt"},
		{"crc over 32 bits", "basic", sqls("UPDATE files SET crc32c = 4294967296 WHERE path = 'a.txt'"), atFiles, ErrCorrupt, "a.txt"},
		{"negative offset", "basic", sqls("UPDATE files SET offset = -1 WHERE path = 'a.txt'"), atFiles, ErrCorrupt, "a.txt"},
		{"text size", "basic", sqls("UPDATE files SET size = 'big' WHERE path = 'a.txt'"), atFiles, ErrCorrupt, "a.txt"},
		{"text mode", "basic", sqls("UPDATE files SET mode = 'rw' WHERE path = 'a.txt'"), atFiles, ErrCorrupt, "a.txt"},
		{"wrong crc", "basic", sqls("UPDATE files SET crc32c = (crc32c + 1) % 4294967296 WHERE path = 'dir1/b.bin'"), atRead, ErrCRC, "dir1/b.bin"},
		{"flipped byte", "basic", func(t *testing.T, dir, index string) {
			p := filepath.Join(dir, "basic.barecat-shard-00000")
			b, _ := os.ReadFile(p)
			b[1014+100] ^= 1 // inside dir1/sub/c.bin
			os.WriteFile(p, b, 0o644)
		}, atRead, ErrCRC, "dir1/sub/c.bin"},
		{"truncated shard", "basic", func(t *testing.T, dir, index string) {
			if err := os.Truncate(filepath.Join(dir, "basic.barecat-shard-00000"), 5000); err != nil {
				t.Fatal(err)
			}
		}, atRead, ErrBounds, "spaces in name/x y.txt"},
		{"size past the shard", "multishard", sqls("UPDATE files SET size = size + 5000 WHERE path = 'dir1/sub/c.bin'"), atRead, ErrBounds, "dir1/sub/c.bin"},
		{"wrong counter", "basic", sqls("UPDATE dirs SET num_files = 7 WHERE path = 'dir1'"), atVerify, ErrStats, "dir1"},
		{"wrong tree size", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'",
			"UPDATE dirs SET size_tree = 1 WHERE path = 'dir1/sub'",
			"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'"), atVerify, ErrStats, "dir1/sub"},
		{"triggers off", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'"), atVerify, ErrCorrupt, ""},
		{"file and directory", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'",
			"INSERT INTO dirs (path) VALUES ('a.txt')",
			"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'"), atVerify, ErrConflict, "a.txt"},
		{"directory without parent row", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'",
			"INSERT INTO dirs (path) VALUES ('x/y')",
			"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'"), atVerify, ErrCorrupt, "x/y"},
		{"files without directory row", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'",
			"DELETE FROM dirs WHERE path = 'dir2'",
			"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'"), atVerify, ErrCorrupt, "dir2"},
		{"path not normalized", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'",
			"UPDATE files SET path = 'dir2//e.jpg' WHERE path = 'dir2/e.jpg'",
			"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'"), atVerify, ErrInvalidPath, "dir2//e.jpg"},
		{"path escaping the tree", "basic", sqls("UPDATE config SET value_int = 0 WHERE key = 'use_triggers'",
			"UPDATE files SET path = '../a.txt' WHERE path = 'a.txt'",
			"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'"), atVerify, ErrInvalidPath, "../a.txt"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDir(t, confDir(t, c.base))
			index := filepath.Join(dir, c.base+".barecat")
			c.mutate(t, dir, index)
			a, err := Open(index)
			if c.at == atOpen {
				wantErr(t, err, c.kind)
				if e := err.(*Error); e.Path != filepath.Join(dir, c.file) {
					t.Errorf("error names %q, want %q: %v", e.Path, filepath.Join(dir, c.file), err)
				}
				t.Log(err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			var files []File
			err = a.Files(context.Background(), ByPath, func(f File) error {
				files = append(files, f)
				return nil
			})
			if c.at == atFiles {
				wantErr(t, err, c.kind)
				if e := err.(*Error); e.Name != c.file {
					t.Errorf("error names %q, want %q", e.Name, c.file)
				}
				_, err := a.Lookup(c.file)
				wantErr(t, err, c.kind)
				t.Log(err)
			} else if err != nil {
				t.Fatal(err)
			}
			if c.at == atRead {
				i := slices.IndexFunc(files, func(f File) bool { return f.Path == c.file })
				if i < 0 {
					t.Fatalf("%s not listed", c.file)
				}
				_, err := a.ReadFile(files[i])
				wantErr(t, err, c.kind)
				if e := err.(*Error); e.Name != c.file || !strings.HasPrefix(e.Path, dir) {
					t.Errorf("error names %q in %q", e.Name, e.Path)
				}
				t.Log(err)
			}
			rep, err := a.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, p := range rep.Problems {
				found = found || errors.Is(p, c.kind) && p.Name == c.file
			}
			if !found {
				t.Errorf("Verify did not report %v for %q: %v", c.kind, c.file, rep.Problems)
			}
		})
	}
}

func remove(name string) func(t *testing.T, dir, index string) {
	return func(t *testing.T, dir, index string) {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

func write(name, content string) func(t *testing.T, dir, index string) {
	return func(t *testing.T, dir, index string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sqls(stmts ...string) func(t *testing.T, dir, index string) {
	return func(t *testing.T, dir, index string) { execSQL(t, index, stmts...) }
}

// TestOldLayoutAndSchemas reads a 0.2-layout archive (index
// NAME-sqlite-index) with a 0.2 schema (PRIMARY KEY paths, no unique
// path indexes), by its base path and by its index's path, and checks
// the warnings of old and newer minor versions.
func TestOldLayoutAndSchemas(t *testing.T) {
	basic := mustOpen(t, caseIndex(t, "basic"))
	wantFiles, wantDirs := allFiles(t, basic, ByPath), allDirs(t, basic)

	dir := t.TempDir()
	base := filepath.Join(dir, "old")
	index := base + OldIndexSuffix
	var stmts []string
	for _, e := range schema03 {
		s := e.SQL
		switch e.Name {
		case "files":
			s = strings.Replace(s, "path     TEXT NOT NULL,", "path     TEXT PRIMARY KEY NOT NULL,", 1)
		case "dirs":
			s = strings.Replace(s, "path           TEXT NOT NULL,", "path           TEXT PRIMARY KEY,", 1)
		case "idx_files_path", "idx_dirs_path":
			continue
		}
		stmts = append(stmts, s)
	}
	src, err := sqliteuri.File(basic.IndexPath(), "mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	stmts = append(stmts,
		"INSERT INTO config (key, value_int) VALUES ('use_triggers', 0), ('shard_size_limit', 9223372036854775807), ('schema_version_major', 0), ('schema_version_minor', 2)",
		"ATTACH DATABASE '"+src+"' AS src",
		"INSERT INTO dirs (path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, mtime_ns) SELECT path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, mtime_ns FROM src.dirs",
		"INSERT INTO files (path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns) SELECT path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns FROM src.files",
		"UPDATE config SET value_int = 1 WHERE key = 'use_triggers'",
	)
	execSQL(t, index, stmts...)
	shard, err := os.ReadFile(basic.ShardPaths()[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ShardPath(base, 0), shard, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{base, index} {
		a := mustOpen(t, p)
		if a.Layout() != Layout02 || a.IndexPath() != index || a.ShardPaths()[0] != ShardPath(base, 0) {
			t.Errorf("Open(%s): layout %s, index %s, shards %v", p, a.Layout(), a.IndexPath(), a.ShardPaths())
		}
		if ma, mi := a.SchemaVersion(); ma != 0 || mi != 2 || len(a.Warnings()) != 1 || !strings.Contains(a.Warnings()[0], "schema 0.2") {
			t.Errorf("schema %d.%d, warnings %q", ma, mi, a.Warnings())
		}
		if !slices.Equal(allFiles(t, a, ByPath), wantFiles) || !slices.Equal(allDirs(t, a), wantDirs) {
			t.Errorf("Open(%s): rows differ from basic's", p)
		}
		checkVerify(t, a)
	}

	for _, c := range []struct {
		minor int
		warn  string
	}{{1, "schema 0.1"}, {4, "schema 0.4 is newer"}} {
		d := copyDir(t, confDir(t, "basic"))
		idx := filepath.Join(d, "basic.barecat")
		execSQL(t, idx, "UPDATE config SET value_int = "+string(rune('0'+c.minor))+" WHERE key = 'schema_version_minor'")
		a := mustOpen(t, idx)
		if _, mi := a.SchemaVersion(); mi != c.minor || len(a.Warnings()) != 1 || !strings.Contains(a.Warnings()[0], c.warn) {
			t.Errorf("minor %d: warnings %q", mi, a.Warnings())
		}
	}
}

// TestOpenMissing: no index at all.
func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "nothing.barecat"))
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Open of nothing: %v", err)
	}
}
