package sqlitefile

import (
	"errors"
	"fmt"
	"testing"
)

// TestTableDefItems pins what tableSQL makes of each column definition:
// the type (sizes dropped), affinity, NOT NULL, the keys that get an
// automatic index, the rowid's alias, and the message of each refusal.
func TestTableDefItems(t *testing.T) {
	cases := []struct{ sql, want string }{
		{"CREATE TABLE a(k INTEGER PRIMARY KEY, v VARCHAR(65535) NOT NULL UNIQUE, d DECIMAL(10, 5) DEFAULT -1 COLLATE BINARY, b)",
			`cols [{k INTEGER 3 false false} {v VARCHAR 1 true false} {d DECIMAL 2 false false} {b  0 false false}] keys [[1]] rowid 0`},
		{"CREATE TABLE a(x TEXT PRIMARY KEY, y INTEGER PRIMARY KEY, z UNSIGNED BIG INT CHECK (z > 0) DEFAULT (1+2) UNIQUE, UNIQUE (x), PRIMARY KEY (y, z ASC))",
			`cols [{x TEXT 1 false false} {y INTEGER 3 false false} {z UNSIGNED BIG INT 3 false false}] keys [[0] [2] [1 2]] rowid 1`},
		{"CREATE TABLE a(x DOUBLE PRECISION, y FLOATING, CONSTRAINT pk PRIMARY KEY (x COLLATE BINARY), CHECK (y > 0), FOREIGN KEY (y) REFERENCES b(c))",
			`cols [{x DOUBLE PRECISION 4 false false} {y FLOATING 4 false false}] keys [[0]] rowid -1`},
		{"CREATE TABLE a(x INTEGER, PRIMARY KEY (x))", `cols [{x INTEGER 3 false false}] keys [] rowid 0`},
		{"CREATE TABLE a(x INTEGER NOT NULL CONSTRAINT c PRIMARY KEY)", `cols [{x INTEGER 3 true false}] keys [] rowid 0`},
		{"CREATE TABLE a(x TEXT PRIMARY KEY DESC)", `column "x": PRIMARY KEY DESC (the writer orders keys ascending)`},
		{"CREATE TABLE a(x TEXT GENERATED ALWAYS AS (1))", `cols [{x TEXT 1 false true}] keys [] rowid -1`},
		{"CREATE TABLE a(x TEXT AS (1) STORED, y AS (x || 'b') VIRTUAL NOT NULL)", `cols [{x TEXT 1 false false} {y  0 true true}] keys [] rowid -1`},
		{"CREATE TABLE a(k TEXT PRIMARY KEY, v) WITHOUT ROWID", `cols [{k TEXT 1 true false} {v  0 false false}] keys [] rowid -1`},
		{"CREATE TABLE a(k INTEGER PRIMARY KEY, v) WITHOUT ROWID", `cols [{k INTEGER 3 true false} {v  0 false false}] keys [] rowid -1`},
		{"CREATE TABLE a(k, v, PRIMARY KEY (v)) WITHOUT ROWID", `a WITHOUT ROWID table whose PRIMARY KEY is not its first columns in order`},
		{"CREATE TABLE a(k PRIMARY KEY, v UNIQUE) WITHOUT ROWID", `a WITHOUT ROWID table with UNIQUE constraints`},
		{"CREATE TABLE a(k, v) WITHOUT ROWID", `a WITHOUT ROWID table without a PRIMARY KEY`},
		{"CREATE TABLE a(x TEXT COLLATE NOCASE)", "*"},
		{"CREATE TABLE a(x, )", "an empty column definition"},
		{"CREATE TABLE a(x, 'y' + 1)", `cols [{x  0 false false} {y  0 false false}] keys [] rowid -1`}, // a string names a column, as in SQLite
		{"CREATE TABLE a(x, PRIMARY KEY (y))", `a key over "y", which is no column`},
		{"CREATE TABLE a(x, UNIQUE (x DESC))", `column "x": DESC in a key (the writer orders keys ascending)`},
		{"CREATE TABLE a(x, UNIQUE x)", "a key constraint without its column list"},
		{"CREATE TABLE a(x, UNIQUE ())", "a key without columns"},
	}
	for _, c := range cases {
		_, def, err := tableSQL("a", c.sql)
		var got string
		if err != nil {
			if !errors.Is(err, ErrSchema) {
				t.Errorf("%s: %v is no ErrSchema", c.sql, err)
			}
			got = err.Error()
			if c.want == "*" {
				continue // refused; the message is the collation's, tested with it
			}
			want := fmt.Sprintf("%v: table %q: %s: %q", ErrSchema, "a", c.want, c.sql)
			if got != want {
				t.Errorf("%s:\n got %s\nwant %s", c.sql, got, want)
			}
			continue
		}
		keys := fmt.Sprint(def.keys)
		if def.keys == nil {
			keys = "[]"
		}
		got = fmt.Sprintf("cols %v keys %s rowid %d", def.cols, keys, def.rowid)
		if got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.sql, got, c.want)
		}
	}
}
