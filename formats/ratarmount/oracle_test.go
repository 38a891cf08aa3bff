package ratarmount

import (
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// build scans shard and builds its index with Archive set.
func build(t testing.TB, shard string) *Builder {
	t.Helper()
	f, err := os.Open(shard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	b := &Builder{Archive: f}
	if _, err := tarfile.Walk(shard, tarfile.Options{}, b.Add); err != nil {
		t.Fatalf("%s: %v", shard, err)
	}
	return b
}

// write builds shard's index into a temporary file and returns its path.
func write(t testing.TB, shard string) (string, error) {
	t.Helper()
	b := build(t, shard)
	fi, err := os.Stat(shard)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(shard)+Suffix)
	return out, b.WriteTo(out, fi)
}

// dump lists a database's content for comparison: sqlite_master (root
// pages as "page", see below), what PRAGMA integrity_check says, then every
// table named in sqlite_master, rows in rowid order (the rowid first), each
// value with its storage class (the Go type the driver gives it).
func dump(t testing.TB, path string) map[string][]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	out := map[string][]string{}
	var tables []string
	err = query(context.Background(), db, `SELECT type, name, tbl_name, rootpage, sql FROM sqlite_master ORDER BY rowid`, func(v []any) error {
		// rootpage is where a b-tree starts in this file, not a property
		// of the index: SQLite finds a table or an index by its name in
		// sqlite_master, and ratarmount never reads rootpage. The writer
		// lays out pages in another order than SQLite's VACUUM, so only
		// whether the object has a b-tree is compared (view and trigger:
		// 0); PRAGMA integrity_check checks that each one is there, whole.
		if n, ok := v[3].(int64); ok && n > 0 {
			v[3] = "page"
		}
		out["sqlite_master"] = append(out["sqlite_master"], values(v))
		if v[0] == "table" {
			tables = append(tables, v[1].(string))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	err = query(context.Background(), db, `PRAGMA integrity_check`, func(v []any) error {
		out["integrity_check"] = append(out["integrity_check"], values(v))
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	for _, tb := range tables {
		err := query(context.Background(), db, fmt.Sprintf(`SELECT rowid, * FROM %q ORDER BY rowid`, tb), func(v []any) error {
			out[tb] = append(out[tb], values(v))
			return nil
		})
		if err != nil {
			t.Fatalf("%s: table %s: %v", path, tb, err)
		}
	}
	return out
}

func values(v []any) string {
	parts := make([]string, len(v))
	for i, x := range v {
		switch x := x.(type) {
		case nil:
			parts[i] = "NULL"
		case int64:
			parts[i] = "int:" + strconv.FormatInt(x, 10)
		case float64:
			parts[i] = "real:" + strconv.FormatFloat(x, 'g', -1, 64)
		case string:
			parts[i] = "text:" + strconv.Quote(x)
		case []byte:
			parts[i] = "blob:" + hex.EncodeToString(x)
		default:
			parts[i] = fmt.Sprintf("%T:%v", x, x)
		}
	}
	return strings.Join(parts, "|")
}

// shards lists testdata's shards.
func shards(t testing.TB) []string {
	s, _ := filepath.Glob(filepath.Join("testdata", "*", "*.tar"))
	if len(s) < 30 {
		t.Fatalf("only %d testdata shards", len(s))
	}
	return s
}

// TestOracle: for every testdata shard, the index written here equals the
// one ratarmount wrote, table for table: sqlite_master (statements, and
// which objects have a b-tree, not at which page: see dump), PRAGMA
// integrity_check ("ok" for both), and every table's rows in rowid order
// with their storage classes. Two things cannot be equal and are compared as ratarmount
// reads them: tarstats (st_size equal, the attributes the same, in the
// same order, st_mtime that of the testdata copy of the shard), and the
// versions rows, of which ratarmount also writes one per compression
// module it found loaded (indexed_gzip where it was installed).
func TestOracle(t *testing.T) {
	compared := 0
	for _, shard := range shards(t) {
		t.Run(strings.TrimPrefix(shard, "testdata/"), func(t *testing.T) {
			oracle := IndexPath(shard)
			got, err := write(t, shard)
			if _, serr := os.Stat(oracle); errors.Is(serr, os.ErrNotExist) {
				// ratarmount wrote none: a shard of zeros or of no byte.
				if !errors.Is(err, ErrEmpty) {
					t.Fatalf("WriteTo: %v, want ErrEmpty", err)
				}
				if _, err := os.Stat(got); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("WriteTo left %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			d := dump(t, got)
			if !slices.Equal(d["integrity_check"], []string{`text:"ok"`}) {
				t.Errorf("integrity_check: %v", d["integrity_check"])
			}
			compareDumps(t, shard, d, dump(t, oracle))
			for _, suffix := range []string{"-journal", "-wal", "-shm"} {
				if _, err := os.Stat(got + suffix); err == nil {
					t.Errorf("%s left behind", got+suffix)
				}
			}
			compared++
		})
	}
	if compared < 28 {
		t.Errorf("only %d indexes compared", compared)
	}
}

func compareDumps(t *testing.T, shard string, got, want map[string][]string) {
	t.Helper()
	var names []string
	for k := range want {
		names = append(names, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("table %s: not in ratarmount's index", k)
		}
	}
	slices.Sort(names)
	for _, tb := range names {
		g, w := got[tb], want[tb]
		switch tb {
		case TableVersions:
			w = slices.DeleteFunc(slices.Clone(w), func(r string) bool {
				return !strings.Contains(r, `|text:"ratarmount"|`) && !strings.Contains(r, `|text:"index"|`)
			})
		case TableMetadata:
			if len(g) != len(w) || len(g) < 1 {
				t.Errorf("metadata: %d rows, want %d", len(g), len(w))
				continue
			}
			compareTarStats(t, shard, g[0], w[0])
			g, w = g[1:], w[1:]
		}
		if !slices.Equal(g, w) {
			t.Errorf("table %s differs:\n%s", tb, diffRows(g, w))
		}
	}
}

// compareTarStats compares the tarstats rows (rowid|key|value).
func compareTarStats(t *testing.T, shard, got, want string) {
	t.Helper()
	parse := func(row string) (keys []string, m map[string]json.Number) {
		parts := strings.SplitN(row, "|", 3)
		if len(parts) != 3 || parts[1] != `text:"tarstats"` {
			t.Fatalf("metadata row 1 is %s, not tarstats", row)
		}
		s, err := strconv.Unquote(strings.TrimPrefix(parts[2], "text:"))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("tarstats %s: %v", s, err)
		}
		for _, kv := range strings.Split(strings.Trim(s, "{}"), ", ") {
			k, _, _ := strings.Cut(kv, ": ")
			keys = append(keys, k)
		}
		return keys, m
	}
	gk, gm := parse(got)
	wk, wm := parse(want)
	if !slices.Equal(gk, wk) {
		t.Errorf("tarstats attributes %v, ratarmount's %v", gk, wk)
	}
	if gm["st_size"] != wm["st_size"] {
		t.Errorf("tarstats st_size %s, ratarmount's %s", gm["st_size"], wm["st_size"])
	}
	fi, err := os.Stat(shard)
	if err != nil {
		t.Fatal(err)
	}
	mt := fi.ModTime()
	if want := pyFloat(statTime(mt.Unix(), int64(mt.Nanosecond()))); string(gm["st_mtime"]) != want {
		t.Errorf("tarstats st_mtime %s, the shard's is %s", gm["st_mtime"], want)
	}
}

func diffRows(got, want []string) string {
	var b strings.Builder
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			fmt.Fprintf(&b, "  row %d\n    got  %s\n    want %s\n", i+1, g, w)
		}
	}
	return b.String()
}

// TestReadOracle: Read gives, for ratarmount's index and for ours, the
// same content, and the content Builder.Index gives without a file (the
// tarstats and versions rows aside, as in TestOracle).
func TestReadOracle(t *testing.T) {
	for _, shard := range shards(t) {
		oracle := IndexPath(shard)
		if _, err := os.Stat(oracle); err != nil {
			continue
		}
		want, err := Read(oracle)
		if err != nil {
			t.Fatalf("Read(%s): %v", oracle, err)
		}
		path, err := write(t, shard)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Read(path)
		if err != nil {
			t.Fatalf("Read(%s): %v", path, err)
		}
		fi, _ := os.Stat(shard)
		mem, err := build(t, shard).Index(fi)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, mem) {
			t.Errorf("%s: Read of the written index differs from Builder.Index", shard)
		}
		// The written index describes the shard; ratarmount's, made of
		// another copy of it, has the same size.
		if err := got.CheckArchive(fi, true); err != nil {
			t.Errorf("%s: CheckArchive: %v", shard, err)
		}
		if err := want.CheckArchive(fi, false); err != nil {
			t.Errorf("%s: CheckArchive of ratarmount's index: %v", shard, err)
		}
		for _, ix := range []*Index{got, want} {
			ix.Metadata = slices.DeleteFunc(ix.Metadata, func(kv KeyValue) bool { return kv.Key == "tarstats" })
			ix.Versions = slices.DeleteFunc(ix.Versions, func(v Version) bool { return v.Name != "ratarmount" && v.Name != "index" })
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Read gives\n%+v\nfor ratarmount's index\n%+v", shard, got, want)
		}
	}
}
