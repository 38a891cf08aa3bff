package energon

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/internal/pathguard"
)

// pyIsReg is Python's TarInfo.isreg() on a scanned member: the regular
// types and GNU's sparse type (a pax sparse member has type '0').
func pyIsReg(m *tarfile.Member) bool {
	return m.Typeflag == tarfile.TypeReg || m.Typeflag == tarfile.TypeCont || m.Typeflag == tarfile.TypeGNUSparse
}

// caseShards reads the shards of a testdata case as energon's prepare
// does: the *.tar files in energon's order, each member fed as tarfile
// gives it. A shard the scanner cannot read gets no sample, as energon
// skips a shard tarfile cannot open.
func caseShards(t testing.TB, dir string) []ShardSamples {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(dir, "*.tar"))
	names := make([]string, len(paths))
	for i, p := range paths {
		names[i] = filepath.Base(p)
	}
	SortShards(names)
	var shards []ShardSamples
	for _, name := range names {
		var b IdxBuilder
		end, err := tarfile.Walk(filepath.Join(dir, name), tarfile.Options{}, func(m *tarfile.Member) error {
			if pyIsReg(m) {
				size := m.Size
				if m.Sparse {
					size = m.RealSize
				}
				b.AddMember(string(m.Name), m.FirstOffset, m.DataOffset, size)
			}
			return nil
		})
		if err != nil {
			shards = append(shards, ShardSamples{Name: name})
			continue
		}
		idx := b.Bytes(end)
		if want, err := os.ReadFile(filepath.Join(dir, name+IdxSuffix)); err == nil && !bytes.Equal(idx, want) {
			t.Errorf("%s/%s: .tar.idx differs from the oracle's", dir, name)
		}
		shards = append(shards, b.Shard(name, end))
	}
	return shards
}

// oracleCases are the testdata cases energon prepared completely.
func oracleCases(t *testing.T) []string {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "*", MetaDir, IndexFile))
	var cases []string
	for _, d := range dirs {
		cases = append(cases, filepath.Dir(filepath.Dir(d)))
	}
	if len(cases) < 8 {
		t.Fatalf("only %d oracle cases", len(cases))
	}
	return cases
}

// writeCase writes a case's .nv-meta into a new directory, with an empty
// .info.yaml there beforehand (as the oracle's run had, so that energon
// rewrote it).
func writeCase(t *testing.T, shards []ShardSamples) string {
	t.Helper()
	out := t.TempDir()
	if err := os.Mkdir(filepath.Join(out, MetaDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, MetaDir, InfoYAMLFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(out, shards, MetaOptions{}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMetaOracle: for every case energon prepared, our .nv-meta is
// energon's: index.sqlite table for table, .info.json, .info.yaml and
// split.yaml byte for byte, index.uuid a version-4 UUID that depends on
// the content only.
func TestMetaOracle(t *testing.T) {
	for _, dir := range oracleCases(t) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			shards := caseShards(t, dir)
			out := writeCase(t, shards)
			want, got := filepath.Join(dir, MetaDir), filepath.Join(out, MetaDir)
			for _, f := range []string{InfoJSONFile, InfoYAMLFile, SplitYAMLFile} {
				w, _ := os.ReadFile(filepath.Join(want, f))
				g, err := os.ReadFile(filepath.Join(got, f))
				if err != nil || !bytes.Equal(g, w) {
					t.Errorf("%s: got %q (%v), want %q", f, g, err, w)
				}
			}
			compareDBs(t, filepath.Join(got, IndexFile), filepath.Join(want, IndexFile))
			compareHeaders(t, filepath.Join(got, IndexFile), filepath.Join(want, IndexFile))

			u, err := os.ReadFile(filepath.Join(got, UUIDFile))
			if err != nil || !isUUID4(string(u)) {
				t.Errorf("index.uuid %q (%v) is no version-4 UUID", u, err)
			}
			again := writeCase(t, shards)
			if u2, _ := os.ReadFile(filepath.Join(again, MetaDir, UUIDFile)); !bytes.Equal(u2, u) {
				t.Errorf("index.uuid %q, then %q for the same shards", u, u2)
			}
			entries, _ := os.ReadDir(got)
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if w := []string{InfoJSONFile, InfoYAMLFile, IndexFile, UUIDFile, SplitYAMLFile}; !reflect.DeepEqual(names, w) {
				t.Errorf(".nv-meta holds %q, want %q", names, w)
			}

			// Both .nv-meta read back as the shards.
			for _, d := range []string{dir, out} {
				m, err := ReadMeta(d)
				if err != nil {
					t.Fatalf("ReadMeta(%s): %v", d, err)
				}
				if !reflect.DeepEqual(m.Shards, shards) {
					t.Errorf("ReadMeta(%s).Shards = %+v, want %+v", d, m.Shards, shards)
				}
				var all []string
				for _, s := range shards {
					all = append(all, s.Name)
				}
				if len(m.Splits) != 3 || m.Splits[0].Name != "train" || !reflect.DeepEqual(m.Splits[0].Shards, all) ||
					len(m.Splits[1].Shards)+len(m.Splits[2].Shards)+len(m.Exclude) != 0 {
					t.Errorf("ReadMeta(%s).Splits = %+v, exclude %q", d, m.Splits, m.Exclude)
				}
				if m.EnergonVersion != DefaultEnergonVersion || m.InfoFile != InfoJSONFile || !isUUID4(m.UUID) {
					t.Errorf("ReadMeta(%s): version %q, info %s, uuid %q", d, m.EnergonVersion, m.InfoFile, m.UUID)
				}
			}
		})
	}
}

func isUUID4(s string) bool {
	return uuidForm.MatchString(s) && s[14] == '4' && strings.ContainsRune("89ab", rune(s[19]))
}

// dumpDB lists a database's schema (sqlite_master in rowid order) and
// every table's rows in rowid order, each value with its SQLite type.
func dumpDB(t *testing.T, path string) []string {
	t.Helper()
	db, err := openIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	var out []string
	var tables []string
	rows := func(q string) {
		r, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer r.Close()
		cols, _ := r.Columns()
		for r.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := r.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			line := q + ":"
			for _, v := range vals {
				line += fmt.Sprintf(" %T(%v)", v, v)
			}
			out = append(out, line)
		}
	}
	// rootpage, the page where each table's and index's b-tree starts,
	// is left out: it depends on the order the writer wrote the pages in
	// (energon's SQLite made the tables' roots first, sqlitefile makes
	// each root once the pages below it are written), and no reader
	// depends on it: SQLite reads it from sqlite_master and finds tables
	// and indexes by name.
	rows("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY rowid")
	r, err := db.QueryContext(ctx, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		var n string
		r.Scan(&n)
		tables = append(tables, n)
	}
	r.Close()
	for _, tb := range tables {
		rows("SELECT * FROM " + tb + " ORDER BY rowid")
	}
	for _, p := range []string{"user_version", "application_id", "encoding", "page_size", "auto_vacuum", "freelist_count"} {
		rows("PRAGMA " + p)
	}
	return out
}

// compareDBs compares the database got with want, table for table, and
// has SQLite check got.
func compareDBs(t *testing.T, got, want string) {
	t.Helper()
	if r := integrityCheck(t, got); r != "ok" {
		t.Errorf("integrity_check of %s: %s", got, r)
	}
	g, w := dumpDB(t, got), dumpDB(t, want)
	if !slices.Equal(g, w) {
		for i := range max(len(g), len(w)) {
			var a, b string
			if i < len(g) {
				a = g[i]
			}
			if i < len(w) {
				b = w[i]
			}
			if a != b {
				t.Errorf("index.sqlite differs at line %d:\n got %s\nwant %s", i, a, b)
				return
			}
		}
	}
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		if _, err := os.Stat(got + suffix); err == nil {
			t.Errorf("%s left beside index.sqlite", suffix)
		}
	}
}

// TestMetaDuplicates: energon refused the cases with a key in two places;
// so does WriteMeta, naming them in the order energon meets them, and it
// writes nothing.
func TestMetaDuplicates(t *testing.T) {
	for _, tt := range []struct {
		dir   string
		keys  []string
		first []KeyLocation
	}{
		{"duplicates", []string{"b", "c"}, []KeyLocation{{"train_0000.tar", 3072}, {"train_0000.tar", 5120}}},
		{"noncontiguous", []string{"a", "b", "c", "d"}, []KeyLocation{{"train_0000.tar", 0}, {"train_0000.tar", 2048}}},
	} {
		shards := caseShards(t, filepath.Join("testdata", tt.dir))
		out := t.TempDir()
		err := WriteMeta(out, shards, MetaOptions{})
		var de *DuplicateKeyError
		if !errors.Is(err, ErrDuplicateKey) || !errors.As(err, &de) {
			t.Fatalf("%s: %v, want ErrDuplicateKey", tt.dir, err)
		}
		var keys []string
		for _, k := range de.Keys {
			keys = append(keys, k.Key)
			if k.Count != 2 || len(k.At) != 2 {
				t.Errorf("%s: key %q: %d times at %v", tt.dir, k.Key, k.Count, k.At)
			}
		}
		if !slices.Equal(keys, tt.keys) || de.Count != len(tt.keys) || !slices.Equal(de.Keys[0].At, tt.first) {
			t.Errorf("%s: %+v, want keys %q, the first at %v", tt.dir, de, tt.keys, tt.first)
		}
		for _, k := range tt.keys {
			if !strings.Contains(err.Error(), fmt.Sprintf("%q", k)) {
				t.Errorf("%s: %q does not name %q", tt.dir, err, k)
			}
		}
		assertNothingWritten(t, out)
	}
}

func assertNothingWritten(t *testing.T, dir string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, MetaDir)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s written (%v)", MetaDir, err)
	}
}

// TestMetaNoSamples: energon stopped at train_0001.tar, a shard of zeros
// without a sample (train_0003.tar, of no byte, it could not open); so
// does WriteMeta.
func TestMetaNoSamples(t *testing.T) {
	shards := caseShards(t, filepath.Join("testdata", "empty_shard_middle"))
	out := t.TempDir()
	err := WriteMeta(out, shards, MetaOptions{})
	var ne *NoSamplesError
	if !errors.Is(err, ErrNoSamples) || !errors.As(err, &ne) || len(ne.Shards) == 0 || ne.Shards[0] != "train_0001.tar" {
		t.Fatalf("%v, want ErrNoSamples for train_0001.tar", err)
	}
	if !strings.Contains(err.Error(), "train_0001.tar") || errors.Is(err, ErrDuplicateKey) {
		t.Errorf("%q", err)
	}
	assertNothingWritten(t, out)
	if err := WriteMeta(out, nil, MetaOptions{}); !errors.Is(err, ErrNoSamples) {
		t.Errorf("no shard: %v", err)
	}
}

// TestMetaBothErrors: a dataset with an empty shard and a repeated key
// gets both errors.
func TestMetaBothErrors(t *testing.T) {
	shards := []ShardSamples{
		{Name: "a.tar", Samples: []Sample{{Key: "k", Size: 512}}},
		{Name: "b.tar"},
		{Name: "c.tar", Samples: []Sample{{Key: "k", Size: 512}}},
	}
	err := WriteMeta(t.TempDir(), shards, MetaOptions{})
	if !errors.Is(err, ErrNoSamples) || !errors.Is(err, ErrDuplicateKey) {
		t.Errorf("%v", err)
	}
}

// TestMetaNames: names energon cannot take.
func TestMetaNames(t *testing.T) {
	one := func(name, key, part string) []ShardSamples {
		return []ShardSamples{{Name: name, Samples: []Sample{{Key: key, Size: 1024}}, Parts: []Part{{Name: part, Offset: 512, Size: 1}}}}
	}
	for _, shards := range [][]ShardSamples{
		one("a{1,2}.tar", "k", "jpg"),
		one("a{.tar", "k", "jpg"),
		one(`a\b.tar`, "k", "jpg"),
		one("../a.tar", "k", "jpg"),
		one("/a.tar", "k", "jpg"),
		one("./a.tar", "k", "jpg"),
		one("a//b.tar", "k", "jpg"),
		one("", "k", "jpg"),
		one("a\xff.tar", "k", "jpg"),
		one("a.tar", "k\xff", "jpg"),
		one("a.tar", "k", "jp\xffg"),
		append(one("a01_5.tar", "k", "jpg"), one("a1_6.tar", "l", "jpg")...),
		append(one("x\u0661\u0660.tar", "k", "jpg"), one("x\u0661\u0661.tar", "l", "jpg")...),
		append(one("a.tar", "k", "jpg"), one("a.tar", "l", "jpg")...),
	} {
		out := t.TempDir()
		if err := WriteMeta(out, shards, MetaOptions{}); !errors.Is(err, ErrName) {
			t.Errorf("%q: %v, want ErrName", shards[0].Name, err)
		}
		assertNothingWritten(t, out)
	}
	// Braces that brace expansion leaves alone are names like others.
	if err := WriteMeta(t.TempDir(), one("{a}.tar", "k", "jpg"), MetaOptions{}); err != nil {
		t.Error(err)
	}
}

// TestMetaFiles: what WriteMeta does around the files: energon's modes,
// no legacy .info.yaml of its own, a stale journal removed, the same
// bytes when written again, another UUID for other content.
func TestMetaFiles(t *testing.T) {
	ds := t.TempDir()
	shards := caseShards(t, filepath.Join("testdata", "webdataset"))
	for _, s := range shards {
		if err := os.WriteFile(filepath.Join(ds, s.Name), nil, 0o640); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(ds, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := WriteMeta(ds, shards, MetaOptions{}); err != nil {
		t.Fatal(err)
	}
	meta := filepath.Join(ds, MetaDir)
	if fi, err := os.Stat(meta); err != nil || fi.Mode().Perm() != 0o750 {
		t.Errorf(".nv-meta: %v %v", fi.Mode(), err)
	}
	before := map[string][]byte{}
	for _, f := range []string{InfoJSONFile, IndexFile, UUIDFile, SplitYAMLFile} {
		fi, err := os.Stat(filepath.Join(meta, f))
		if err != nil || fi.Mode().Perm() != 0o640 {
			t.Errorf("%s: %v %v", f, fi.Mode(), err)
		}
		before[f], _ = os.ReadFile(filepath.Join(meta, f))
	}
	if _, err := os.Stat(filepath.Join(meta, InfoYAMLFile)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf(".info.yaml written without one before: %v", err)
	}

	os.WriteFile(filepath.Join(meta, IndexFile+"-journal"), []byte("stale"), 0o644)
	if err := WriteMeta(ds, shards, MetaOptions{}); err != nil {
		t.Fatal(err)
	}
	for f, b := range before {
		if after, _ := os.ReadFile(filepath.Join(meta, f)); f != IndexFile && !bytes.Equal(after, b) {
			t.Errorf("%s changed when written again", f)
		}
	}
	if _, err := os.Stat(filepath.Join(meta, IndexFile+"-journal")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stale journal kept: %v", err)
	}
	if entries, _ := os.ReadDir(meta); len(entries) != 4 {
		t.Errorf("%d files in .nv-meta", len(entries))
	}

	shards[1].Samples[0].Size--
	if err := WriteMeta(ds, shards, MetaOptions{EnergonVersion: "7.3.2"}); err != nil {
		t.Fatal(err)
	}
	if u, _ := os.ReadFile(filepath.Join(meta, UUIDFile)); bytes.Equal(u, before[UUIDFile]) {
		t.Error("index.uuid kept for other content")
	}
	m, err := ReadMeta(ds)
	if err != nil || m.EnergonVersion != "7.3.2" {
		t.Errorf("%+v %v", m, err)
	}
}

// TestShardLess: energon sorts paths by their components.
func TestShardLess(t *testing.T) {
	names := []string{"a.tar", "a-b/x.tar", "a/x.tar", "a/b/c.tar", "B.tar", "a/b.tar", "é.tar", "z.tar"}
	SortShards(names)
	// Python: sorted(PurePosixPath(n) for n in names)
	want := []string{"B.tar", "a/b/c.tar", "a/b.tar", "a/x.tar", "a-b/x.tar", "a.tar", "z.tar", "é.tar"}
	if !slices.Equal(names, want) {
		t.Errorf("%q, want %q", names, want)
	}
}

// TestShardSizes: a sample runs to the next one, the last to the end.
func TestShardSizes(t *testing.T) {
	var b IdxBuilder
	b.AddMember("a.jpg", 0, 512, 10)
	b.AddMember("a.cls", 1024, 1536, 1)
	b.AddMember("__key__", 2048, 2560, 1)
	b.AddMember("noext", 3072, 3584, 1)
	b.AddMember("b.jpg", 4096, 4608, 3)
	s := b.Shard("s.tar", 6144)
	want := ShardSamples{Name: "s.tar", End: 6144,
		Samples: []Sample{{"a", 0, 4096}, {"b", 4096, 2048}},
		Parts:   []Part{{0, "jpg", 512, 10}, {0, "cls", 1536, 1}, {1, "jpg", 4608, 3}},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("%+v", s)
	}
	if got, _, _ := ParseIdx(b.Bytes(6144)); !slices.Equal(got, []uint64{0, 4096}) {
		t.Errorf(".tar.idx %v", got)
	}
}

// TestReadMetaErrors: files that are not energon's, or disagree.
func TestReadMetaErrors(t *testing.T) {
	src := filepath.Join("testdata", "ustar_basic", MetaDir)
	for name, change := range map[string]func(dir string){
		"info not json": func(d string) { os.WriteFile(filepath.Join(d, InfoJSONFile), []byte("{"), 0o644) },
		"info unknown key": func(d string) {
			os.WriteFile(filepath.Join(d, InfoJSONFile), []byte(`{"shard_counts": {}, "x": 1}`), 0o644)
		},
		"count differs": func(d string) { replaceIn(t, filepath.Join(d, InfoJSONFile), `: 2`, `: 3`) },
		"shard missing": func(d string) {
			replaceIn(t, filepath.Join(d, InfoJSONFile), ",\n    \"val_0000.tar\": 2", "")
		},
		"split names other": func(d string) { replaceIn(t, filepath.Join(d, SplitYAMLFile), "val_0000", "val_0001") },
		"split not yaml":    func(d string) { os.WriteFile(filepath.Join(d, SplitYAMLFile), []byte("split_parts: [\n"), 0o644) },
		"uuid":              func(d string) { os.WriteFile(filepath.Join(d, UUIDFile), []byte("x"), 0o644) },
		"no sqlite":         func(d string) { os.WriteFile(filepath.Join(d, IndexFile), []byte("not a database, not at all"), 0o644) },
		"sqlite tables": func(d string) {
			db, err := sql.Open("sqlite", filepath.Join(d, IndexFile))
			if err == nil {
				_, err = db.Exec("DROP TABLE sample_parts")
				db.Close()
			}
			if err != nil {
				t.Fatal(err)
			}
		},
	} {
		ds := t.TempDir()
		dir := filepath.Join(ds, MetaDir)
		os.Mkdir(dir, 0o755)
		for _, f := range []string{InfoJSONFile, IndexFile, UUIDFile, SplitYAMLFile} {
			b, _ := os.ReadFile(filepath.Join(src, f))
			os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
		change(dir)
		if _, err := ReadMeta(ds); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	if _, err := ReadMeta(t.TempDir()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("no .nv-meta: %v", err)
	}
}

func replaceIn(t *testing.T, path, old, new string) {
	b, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s: no %q (%v)", path, old, err)
	}
	os.WriteFile(path, bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

// integrityCheck is what PRAGMA integrity_check says of a database.
func integrityCheck(t *testing.T, path string) string {
	t.Helper()
	db, err := openIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := db.Query("PRAGMA integrity_check")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var lines []string
	for r.Next() {
		var s string
		if err := r.Scan(&s); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, s)
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// compareHeaders compares the 100-byte headers of two database files but
// for the fields that count writes for SQLite's caches (the file change
// counter, the schema cookie, the change count the version number is
// valid for), which differ with the statements that wrote the file, not
// with its content.
func compareHeaders(t *testing.T, got, want string) {
	t.Helper()
	read := func(path string) []byte {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		h := make([]byte, 100)
		if _, err := io.ReadFull(f, h); err != nil {
			t.Fatal(err)
		}
		for _, off := range []int{24, 40, 92} {
			clear(h[off : off+4])
		}
		return h
	}
	if g, w := read(got), read(want); !bytes.Equal(g, w) {
		t.Errorf("database header\n got % x\nwant % x", g, w)
	}
}

// TestReadMetaDuplicateShard: a split part naming a shard twice reads (the
// loader takes it) and is reported.
func TestReadMetaDuplicateShard(t *testing.T) {
	src := filepath.Join("testdata", "ustar_basic", MetaDir)
	ds := t.TempDir()
	dir := filepath.Join(ds, MetaDir)
	os.Mkdir(dir, 0o755)
	for _, f := range []string{InfoJSONFile, IndexFile, UUIDFile, SplitYAMLFile} {
		b, _ := os.ReadFile(filepath.Join(src, f))
		os.WriteFile(filepath.Join(dir, f), b, 0o644)
	}
	m, err := ReadMeta(ds)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.CheckDuplicates(); err != nil {
		t.Fatalf("energon's own: %v", err)
	}
	replaceIn(t, filepath.Join(dir, SplitYAMLFile), "- val_0000.tar", "- val_0000.tar\n  - train_0001.tar")
	if m, err = ReadMeta(ds); err != nil {
		t.Fatal(err)
	}
	if err := m.CheckDuplicates(); !errors.Is(err, ErrDuplicateShard) || !strings.Contains(err.Error(), `"train_0001.tar" at 1 and 3`) {
		t.Errorf("a shard twice: %v", err)
	}
}

// TestMetaContext: reading and writing .nv-meta take the caller's context,
// and a FIFO in place of one of its files is refused, not waited on.
func TestMetaContext(t *testing.T) {
	src := filepath.Join("testdata", "ustar_basic", MetaDir)
	copyMeta := func() (ds, dir string) {
		ds = t.TempDir()
		dir = filepath.Join(ds, MetaDir)
		os.Mkdir(dir, 0o755)
		for _, f := range []string{InfoJSONFile, IndexFile, UUIDFile, SplitYAMLFile} {
			b, _ := os.ReadFile(filepath.Join(src, f))
			os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
		return ds, dir
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	ds, _ := copyMeta()
	if _, err := ReadMetaContext(ctx, ds); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadMetaContext, cancelled: %v", err)
	}
	out := t.TempDir()
	shards := []ShardSamples{{Name: "a.tar", Samples: []Sample{{Key: "k", Offset: 512, Size: 1}}, Parts: []Part{{Name: "k.txt", Offset: 512, Size: 1}}}}
	if err := WriteMetaContext(ctx, out, shards, MetaOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("WriteMetaContext, cancelled: %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, MetaDir, InfoJSONFile)); err == nil {
		t.Error("WriteMetaContext, cancelled, wrote .info.json")
	}
	for _, f := range []string{InfoJSONFile, IndexFile, SplitYAMLFile} {
		ds, dir := copyMeta()
		os.Remove(filepath.Join(dir, f))
		if err := syscall.Mkfifo(filepath.Join(dir, f), 0o644); err != nil {
			t.Skipf("mkfifo: %v", err)
		}
		done := make(chan error, 1)
		go func() { _, err := ReadMeta(ds); done <- err }()
		select {
		case err := <-done:
			if !errors.Is(err, pathguard.ErrNotRegular) {
				t.Errorf("%s a FIFO: %v, want ErrNotRegular", f, err)
			}
		case <-time.After(5 * time.Second):
			w, _ := os.OpenFile(filepath.Join(dir, f), os.O_WRONLY, 0)
			w.Close()
			t.Fatalf("%s a FIFO: ReadMeta still waiting after 5 s", f)
		}
	}
}

// TestReadMetaYAMLSize: split.yaml and .info.yaml are read up to
// maxYAMLSize bytes; a longer file is ErrFormat, refused before parsing.
func TestReadMetaYAMLSize(t *testing.T) {
	src := filepath.Join("testdata", "ustar_basic", MetaDir)
	info := "energon_version: unknown\nshard_counts:\n  train_0000.tar: 3\n  train_0001.tar: 3\n  val_0000.tar: 2\n"
	for _, file := range []string{SplitYAMLFile, InfoYAMLFile} {
		ds := t.TempDir()
		dir := filepath.Join(ds, MetaDir)
		os.Mkdir(dir, 0o755)
		for _, f := range []string{InfoJSONFile, IndexFile, UUIDFile, SplitYAMLFile} {
			b, _ := os.ReadFile(filepath.Join(src, f))
			os.WriteFile(filepath.Join(dir, f), b, 0o644)
		}
		if file == InfoYAMLFile {
			os.Remove(filepath.Join(dir, InfoJSONFile))
			os.WriteFile(filepath.Join(dir, InfoYAMLFile), []byte(info), 0o644)
		}
		// Pad the file with comments to the bound, then past it.
		path := filepath.Join(dir, file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		line := "#" + strings.Repeat("x", 1022) + "\n"
		for len(b)+len(line) <= maxYAMLSize {
			b = append(b, line...)
		}
		b = append(b, strings.Repeat("#", maxYAMLSize-len(b))...)
		os.WriteFile(path, b, 0o644)
		want := InfoJSONFile
		if file == InfoYAMLFile {
			want = InfoYAMLFile
		}
		m, err := ReadMeta(ds)
		if err != nil || m.InfoFile != want || len(m.Shards) != 3 {
			t.Fatalf("%s of %d bytes: %+v, %v", file, len(b), m, err)
		}
		os.WriteFile(path, append(b, '\n'), 0o644)
		_, err = ReadMeta(ds)
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), file) || !strings.Contains(err.Error(), "more than 16777216 bytes") {
			t.Errorf("%s of %d bytes: %v, want ErrFormat", file, len(b)+1, err)
		}
	}
}
