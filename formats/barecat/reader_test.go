package barecat

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestConformance opens every archive barecat 0.3.1 made and checks every
// row of every table against expected.json, reads every file (checking
// its CRC and SHA-256), and verifies the archive.
func TestConformance(t *testing.T) {
	for _, name := range conformanceCases {
		t.Run(name, func(t *testing.T) {
			e := loadExpected(t, name)
			index := caseIndex(t, name)
			a := mustOpen(t, index)

			if a.Layout() != Layout03 || a.IndexPath() != index {
				t.Errorf("layout %q, index %q", a.Layout(), a.IndexPath())
			}
			if ma, mi := a.SchemaVersion(); ma != 0 || mi != 3 {
				t.Errorf("schema %d.%d", ma, mi)
			}
			if len(a.Warnings()) != 0 {
				t.Errorf("warnings %q", a.Warnings())
			}
			if e.PageSize != 4096 || e.UserVersion != 0 || e.JournalMode != "delete" {
				t.Errorf("expected.json: page size %d, user_version %d, journal %q", e.PageSize, e.UserVersion, e.JournalMode)
			}

			// Config: every row, through SQL and through the accessors.
			db := openSQL(t, index, true)
			defer db.Close()
			rows, err := db.Query(`SELECT key, value_text, value_int FROM config ORDER BY key`)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for rows.Next() {
				var k string
				var txt, n any
				if err := rows.Scan(&k, &txt, &n); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprint(k, txt, n))
			}
			rows.Close()
			var want []string
			for _, c := range e.Config {
				var txt, n any
				if c.ValueText != nil {
					txt = *c.ValueText
				}
				if c.ValueInt != nil {
					n = *c.ValueInt
				}
				want = append(want, fmt.Sprint(c.Key, txt, n))
			}
			if !slices.Equal(got, want) {
				t.Errorf("config %q, want %q", got, want)
			}
			for _, c := range e.Config {
				if c.Key == "shard_size_limit" && a.ShardSizeLimit() != *c.ValueInt {
					t.Errorf("ShardSizeLimit %d, want %d", a.ShardSizeLimit(), *c.ValueInt)
				}
			}

			// Shards.
			if len(a.ShardPaths()) != len(e.Shards) {
				t.Fatalf("%d shards, want %d", len(a.ShardPaths()), len(e.Shards))
			}
			for i, s := range e.Shards {
				if filepath.Base(a.ShardPaths()[i]) != s.Name || a.ShardSizes()[i] != s.Size {
					t.Errorf("shard %d: %s of %d bytes, want %s of %d", i, a.ShardPaths()[i], a.ShardSizes()[i], s.Name, s.Size)
				}
			}

			// Files: rows in path order, then the same rows by address.
			files := allFiles(t, a, ByPath)
			exp := slices.Clone(e.Files)
			slices.SortFunc(exp, func(x, y expFile) int { return strings.Compare(x.Path, y.Path) })
			if len(files) != len(exp) {
				t.Fatalf("%d files, want %d", len(files), len(exp))
			}
			if n, err := a.NumFiles(); err != nil || n != int64(len(exp)) {
				t.Errorf("NumFiles %d, %v", n, err)
			}
			withCRC := 0
			for i, x := range exp {
				f := files[i]
				if f != x.file() {
					t.Errorf("file %d:\n got %+v\nwant %+v", i, f, x.file())
				}
				if sqlParent(f.Path) != x.Parent || parentOf(f.Path) != x.Parent {
					t.Errorf("%s: parent %q / %q, barecat's %q", f.Path, sqlParent(f.Path), parentOf(f.Path), x.Parent)
				}
				if x.MtimeType != "int" {
					t.Errorf("%s: mtime_ns stored as %s", f.Path, x.MtimeType)
				}
				b := readAll(t, a, f)
				if sha(b) != x.SHA256 || crc32.Checksum(b, castagnoli) != x.CRCActual {
					t.Errorf("%s: bytes differ from expected.json", f.Path)
				}
				if f.HasCRC {
					withCRC++
				}
				if g, err := a.Lookup("./" + f.Path); err != nil || g != f {
					t.Errorf("Lookup(%q) = %+v, %v", f.Path, g, err)
				}
			}
			byAddr := allFiles(t, a, ByAddress)
			if !slices.IsSortedFunc(byAddr, func(x, y File) int {
				if x.Shard != y.Shard {
					return x.Shard - y.Shard
				}
				return int(x.Offset - y.Offset)
			}) || !slices.Equal(sortedFiles(byAddr), files) {
				t.Errorf("ByAddress: not the same rows in (shard, offset) order")
			}

			// Dirs.
			dirs := allDirs(t, a)
			if len(dirs) != len(e.Dirs) {
				t.Fatalf("%d dirs, want %d", len(dirs), len(e.Dirs))
			}
			for i, x := range e.Dirs {
				if dirs[i] != x.dir() {
					t.Errorf("dir %d:\n got %+v\nwant %+v", i, dirs[i], x.dir())
				}
				var p *string
				if x.Path != "" {
					s := sqlParent(x.Path)
					p = &s
				}
				if (p == nil) != (x.Parent == nil) || p != nil && *p != *x.Parent {
					t.Errorf("dir %q: parent %v, barecat's %v", x.Path, p, x.Parent)
				}
			}

			rep, err := a.Verify(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !rep.OK() || rep.Files != int64(len(exp)) || rep.Dirs != int64(len(e.Dirs)) || rep.Checked != int64(withCRC) {
				t.Errorf("Verify: %+v", rep)
				for _, p := range rep.Problems {
					t.Log(p)
				}
			}

			// The schema, verbatim.
			dump, err := os.ReadFile(filepath.Join(confDir(t, name), "schema_dump.sql"))
			if err != nil {
				t.Fatal(err)
			}
			if d := schemaDump(t, index); d != string(dump) {
				t.Errorf("schema dump differs from schema_dump.sql")
			}
		})
	}
}

// TestEmbeddedSchema checks that the schema the Writer emits is the one
// barecat stored, entry for entry.
func TestEmbeddedSchema(t *testing.T) {
	for _, name := range conformanceCases {
		dump, err := os.ReadFile(filepath.Join(confDir(t, name), "schema_dump.sql"))
		if err != nil {
			t.Fatal(err)
		}
		want := formatSchemaDump(schema03)
		if name != "empty" {
			want += "-- table sqlite_stat1 (on sqlite_stat1)\nCREATE TABLE sqlite_stat1(tbl,idx,stat);\n\n"
		}
		if string(dump) != want {
			t.Errorf("%s/schema_dump.sql differs from the embedded schema", name)
		}
	}
	var types []string
	for _, e := range schema03 {
		types = append(types, e.Type)
	}
	want := slices.Concat(slices.Repeat([]string{"table"}, 3), slices.Repeat([]string{"index"}, 5), slices.Repeat([]string{"trigger"}, 10))
	if !slices.Equal(types, want) {
		t.Errorf("schema entries %q", types)
	}
}

// TestReaderPartialReads reads a file in small pieces and through
// WriteTo, and checks that a file closed early reads no more.
func TestReaderPartialReads(t *testing.T) {
	a := mustOpen(t, caseIndex(t, "basic"))
	f, err := a.Lookup("dir1/sub/c.bin")
	if err != nil {
		t.Fatal(err)
	}
	whole := readAll(t, a, f)
	r, err := a.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	buf := make([]byte, 7)
	for {
		n, err := r.Read(buf)
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if string(got) != string(whole) || len(got) != 4096 {
		t.Fatalf("read %d bytes in pieces, %d whole", len(got), len(whole))
	}
	if n, err := r.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("Read after the end: %d, %v", n, err)
	}
	r, _ = a.Open(f)
	r.Read(buf)
	r.Close()
	if _, err := r.Read(buf); err == nil {
		t.Fatal("Read after Close succeeded")
	}
	b, err := a.ReadFile(f)
	if err != nil || string(b) != string(whole) {
		t.Fatalf("ReadFile: %d bytes, %v", len(b), err)
	}
	empty, err := a.Lookup("empty.bin")
	if err != nil {
		t.Fatal(err)
	}
	if b := readAll(t, a, empty); len(b) != 0 {
		t.Fatalf("empty.bin: %d bytes", len(b))
	}
	if _, err := a.Lookup("nope"); !os.IsNotExist(err) && !strings.Contains(fmt.Sprint(err), "no such file") {
		t.Fatalf("Lookup of a missing file: %v", err)
	}
}
