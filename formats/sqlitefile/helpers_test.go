package sqlitefile

import (
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// create writes a database with the writer and gives its path.
func create(t testing.TB, opts Options, fill func(w *Writer)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "w.db")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := New(f, opts)
	if err != nil {
		t.Fatal(err)
	}
	fill(w)
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return path
}

// open opens a database with modernc.org/sqlite.
func open(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// query gives a query's rows, each value as the driver gives it.
func query(t testing.TB, db *sql.DB, q string, args ...any) [][]any {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		r := make([]any, len(cols))
		p := make([]any, len(cols))
		for i := range r {
			p[i] = &r[i]
		}
		if err := rows.Scan(p...); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// checkIntegrity runs PRAGMA integrity_check on the database with modernc
// and, if there is one on the machine, with the sqlite3 program: another
// SQLite, built from C.
func checkIntegrity(t testing.TB, path string) {
	t.Helper()
	got := query(t, open(t, path), "PRAGMA integrity_check")
	if len(got) != 1 || got[0][0] != "ok" {
		t.Fatalf("integrity_check: %v", got)
	}
	if cli, err := exec.LookPath("sqlite3"); err == nil {
		out, err := exec.Command(cli, "-readonly", path, "PRAGMA integrity_check").CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Fatalf("sqlite3 integrity_check: %v: %s", err, out)
		}
	}
}

// driverValue is v as database/sql passes it to SQLite.
func driverValue(v Value) any {
	switch v.k {
	case KindInt:
		return v.n
	case KindReal:
		return v.Float64()
	case KindText:
		return v.s
	case KindBlob:
		return []byte(v.s)
	}
	return nil
}

// stmt is one CREATE statement of a schema, and what the writer makes of
// it.
type stmt struct {
	sql    string
	table  string // the table created, or indexed
	index  string // the index created, "" for a table
	cols   []int  // the index's columns
	unique bool
}

// twin builds, with modernc's INSERTs, the database the writer builds from
// the same statements and rows.
func twin(t testing.TB, schema []stmt, rows map[string][][]Value) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "twin.db")
	db := open(t, path)
	if _, err := db.Exec("PRAGMA synchronous=OFF"); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range schema {
		if s.sql == "" {
			continue // an automatic index
		}
		if _, err := tx.Exec(s.sql); err != nil {
			t.Fatalf("%s: %v", s.sql, err)
		}
	}
	for _, s := range schema {
		if s.index != "" {
			continue
		}
		for _, r := range rows[s.table] {
			args := make([]any, len(r))
			for i, v := range r {
				args[i] = driverValue(v)
			}
			q := `INSERT INTO "` + s.table + `" VALUES(?` + strings.Repeat(",?", len(r)-1) + ")"
			if _, err := tx.Exec(q, args...); err != nil {
				t.Fatalf("%s %v: %v", q, args, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	db.Close()
	return path
}

// same compares two databases: the schema (root pages apart) and every
// table's rows, rowids and storage classes included.
func same(t testing.TB, got, want string) {
	t.Helper()
	g, w := open(t, got), open(t, want)
	const qs = "SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid"
	gs, ws := query(t, g, qs), query(t, w, qs)
	if !reflect.DeepEqual(gs, ws) {
		t.Fatalf("sqlite_schema:\n got %q\nwant %q", gs, ws)
	}
	for _, r := range ws {
		if r[0] != "table" {
			continue
		}
		name := r[1].(string)
		q := `SELECT rowid, * FROM "` + name + `"`
		if gr, wr := query(t, g, q), query(t, w, q); !reflect.DeepEqual(gr, wr) {
			t.Fatalf("%s: rows differ:\n got %v\nwant %v", name, clip(gr), clip(wr))
		}
		cols := query(t, w, `SELECT name FROM pragma_table_info(?)`, name)
		var ty []string
		for _, c := range cols {
			ty = append(ty, `typeof("`+c[0].(string)+`")`)
		}
		q = `SELECT ` + strings.Join(ty, ",") + ` FROM "` + name + `"`
		if gr, wr := query(t, g, q), query(t, w, q); !reflect.DeepEqual(gr, wr) {
			t.Fatalf("%s: storage classes differ:\n got %v\nwant %v", name, clip(gr), clip(wr))
		}
	}
}

func clip(rows [][]any) [][]any {
	if len(rows) > 20 {
		return rows[:20]
	}
	return rows
}

// declare declares a schema on a writer.
func declare(t testing.TB, w *Writer, schema []stmt) map[string]*Table {
	t.Helper()
	tables := map[string]*Table{}
	for _, s := range schema {
		switch {
		case s.index == "":
			tables[s.table] = w.Table(s.table, s.sql)
		case s.sql == "":
			if err := tables[s.table].AutoIndex(s.cols...); err != nil {
				t.Fatal(err)
			}
		default:
			if err := w.Index(s.index, s.table, s.sql, s.cols, s.unique); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tables
}

// load writes a schema and its rows with the writer.
func load(t testing.TB, opts Options, schema []stmt, rows map[string][][]Value) string {
	t.Helper()
	return create(t, opts, func(w *Writer) {
		tables := declare(t, w, schema)
		for _, s := range schema {
			if s.index != "" {
				continue
			}
			for _, r := range rows[s.table] {
				if err := tables[s.table].Append(r...); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
}

// plan is the EXPLAIN QUERY PLAN of a query, its details joined.
func plan(t testing.TB, db *sql.DB, q string, args ...any) string {
	t.Helper()
	var d []string
	for _, r := range query(t, db, "EXPLAIN QUERY PLAN "+q, args...) {
		d = append(d, r[len(r)-1].(string))
	}
	return strings.Join(d, "; ")
}
