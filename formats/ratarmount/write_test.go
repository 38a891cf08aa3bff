package ratarmount

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/sqlitefile"
)

// writeSQLRef writes b's index as SQLite itself stores it: Schema's
// statements, then one INSERT per row of b.tables, through
// modernc.org/sqlite. Every value goes through the columns' affinities
// there, which WriteTo, writing pages, does not apply: the twin tests
// compare the two files to catch a value of the wrong storage class, a
// missing automatic index, a b-tree SQLite would not read.
func writeSQLRef(t testing.TB, b *Builder, path string, archive os.FileInfo) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	for _, q := range []string{"PRAGMA journal_mode = OFF", "PRAGMA synchronous = OFF"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, e := range Schema {
		if _, err := tx.ExecContext(ctx, e.SQL); err != nil {
			t.Fatalf("%s %s: %v", e.Type, e.Name, err)
		}
	}
	stmts := map[string]*sql.Stmt{}
	args := make([]any, 0, 15)
	err = b.tables(archive, func(table string, row []sqlitefile.Value) error {
		st := stmts[table]
		if st == nil {
			q := fmt.Sprintf(`INSERT INTO %q VALUES (?%s)`, table, strings.Repeat(", ?", len(columns[table])-1))
			var err error
			if st, err = tx.PrepareContext(ctx, q); err != nil {
				return err
			}
			stmts[table] = st
		}
		args = args[:0]
		for _, v := range row {
			switch v.Kind() {
			case sqlitefile.KindNull:
				args = append(args, nil)
			case sqlitefile.KindInt:
				args = append(args, v.Int64())
			case sqlitefile.KindReal:
				args = append(args, v.Float64())
			case sqlitefile.KindText:
				args = append(args, v.Text())
			default:
				args = append(args, []byte(v.Text()))
			}
		}
		_, err := st.ExecContext(ctx, args...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}

// bigArchive is an archive whose index spans many pages in every b-tree
// of files: members in shuffled order in nested directories, some given
// as directory members and some generated, names and link names long
// enough to spill rows and index keys to overflow pages, a name at two
// offsets, extended attributes, and integral and fractional mtimes.
func bigArchive(t testing.TB, n int) string {
	t.Helper()
	var a archive
	r := rand.New(rand.NewPCG(1, 2))
	for _, i := range r.Perm(n) {
		name := fmt.Sprintf("d%02d/e%03d/%07d.jpg", i%37, i%101, i)
		switch {
		case i%997 == 0:
			a.pax('x', "path", strings.Repeat("long/", 300)+fmt.Sprint(i), "mtime", "1600000000.25")
			a.file(hdr{name: "ignored"}, "x")
		case i%991 == 0:
			a.pax('x', "linkpath", strings.Repeat("target", 900))
			a.header(hdr{name: name, typeflag: '2'})
		case i%89 == 0:
			a.pax('x', "SCHILY.xattr.user.k"+fmt.Sprint(i%3), fmt.Sprint(i), "SCHILY.xattr.user.all", "v")
			a.file(hdr{name: name}, "xattr")
		case i%53 == 0:
			a.header(hdr{name: fmt.Sprintf("d%02d/", i%37), typeflag: '5', mode: 0o755})
		default:
			a.file(hdr{name: name}, "payload")
		}
		if i == 7 {
			a.file(hdr{name: name}, "again") // the same name at another offset
		}
	}
	return a.write(t, t.TempDir())
}

// TestSQLTwin: WriteTo's file holds what SQLite itself stores for the
// same statements and rows (see writeSQLRef), table for table, on a large
// archive and on every testdata shard, and SQLite finds it whole
// (integrity_check, which also checks every index against its table).
// The view's trigger works on it as on SQLite's own.
func TestSQLTwin(t *testing.T) {
	big := bigArchive(t, 30_000)
	for _, shard := range append([]string{big}, shards(t)...) {
		b := build(t, shard)
		if b.Len() == 0 {
			continue
		}
		fi, err := os.Stat(shard)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		got, want := filepath.Join(dir, "got.sqlite"), filepath.Join(dir, "want.sqlite")
		if err := b.WriteTo(got, fi); err != nil {
			t.Fatalf("%s: %v", shard, err)
		}
		writeSQLRef(t, b, want, fi)
		g, w := dump(t, got), dump(t, want)
		if !slices.Equal(g["integrity_check"], []string{`text:"ok"`}) {
			t.Errorf("%s: integrity_check: %v", shard, g["integrity_check"])
		}
		if !equalDumps(g, w) {
			for k := range w {
				if !slices.Equal(g[k], w[k]) {
					t.Errorf("%s: table %s differs from SQLite's:\n%s", shard, k, diffRows(g[k], w[k]))
				}
			}
			continue
		}
		if shard != big {
			continue
		}
		if n := len(g[TableFiles]); n < 30_000 {
			t.Fatalf("%d rows", n)
		}
		// ratarmount stores extended attributes through the view.
		for _, p := range []string{got, want} {
			db, err := sql.Open("sqlite", "file:"+p)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				`INSERT INTO xattrs VALUES (0, 'user.new', X'00ff')`,
				`INSERT INTO xattrs VALUES (512, 'user.all', 'w')`,
			} {
				if _, err := db.Exec(q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			db.Close()
		}
		if g, w := dump(t, got), dump(t, want); !equalDumps(g, w) {
			t.Errorf("after inserts into xattrs: %v\nSQLite's: %v", g[TableXattrsData], w[TableXattrsData])
		}
	}
}

// TestTableKeys: tableKeys declares what SQLite makes of Schema's
// constraints: the INTEGER PRIMARY KEY that is the rowid, and each
// automatic index, numbered in constraint order, over its columns.
func TestTableKeys(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	var tables []string
	for _, e := range Schema {
		if _, err := db.Exec(e.SQL); err != nil {
			t.Fatal(err)
		}
		if e.Type == "table" {
			tables = append(tables, e.Name)
		}
	}
	if len(tables) != len(tableKeys) {
		t.Errorf("%d tables in Schema, %d in tableKeys", len(tables), len(tableKeys))
	}
	ints := func(q string, args ...any) [][]int64 {
		var out [][]int64
		err := query(context.Background(), db, fmt.Sprintf(q, args...), func(v []any) error {
			var row []int64
			for _, x := range v {
				n, _ := x.(int64)
				row = append(row, n)
			}
			out = append(out, row)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for _, tb := range tables {
		keys, ok := tableKeys[tb]
		if !ok {
			t.Errorf("table %s: not in tableKeys", tb)
			continue
		}
		// The rowid alias: the one primary key column, declared INTEGER,
		// when the primary key has no automatic index.
		rowid := -1
		pk := ints(`SELECT cid, upper(type) = 'INTEGER' FROM pragma_table_info('%s') WHERE pk > 0`, tb)
		pkIndex := ints(`SELECT count(*) FROM pragma_index_list('%s') WHERE origin = 'pk'`, tb)[0][0]
		if len(pk) == 1 && pk[0][1] == 1 && pkIndex == 0 {
			rowid = int(pk[0][0])
		}
		if rowid != keys.rowid {
			t.Errorf("table %s: rowid column %d, tableKeys says %d", tb, rowid, keys.rowid)
		}
		var unique [][]int
		for n := 1; ; n++ {
			name := fmt.Sprintf("sqlite_autoindex_%s_%d", tb, n)
			cols := ints(`SELECT cid FROM pragma_index_info('%s') ORDER BY seqno`, name)
			if len(cols) == 0 {
				break
			}
			var c []int
			for _, r := range cols {
				c = append(c, int(r[0]))
			}
			unique = append(unique, c)
		}
		if fmt.Sprint(unique) != fmt.Sprint(keys.unique) {
			t.Errorf("table %s: automatic indexes over %v, tableKeys says %v", tb, unique, keys.unique)
		}
		other := ints(`SELECT count(*) FROM pragma_index_list('%s') WHERE name NOT LIKE 'sqlite_autoindex_%%'`, tb)[0][0]
		if other != 0 {
			t.Errorf("table %s: %d indexes that are not automatic", tb, other)
		}
	}
}
