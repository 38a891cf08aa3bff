package sqlitefile

import "testing"

// FuzzTableSQL: the reader of CREATE TABLE and CREATE INDEX text, which
// decides what a schema may be, never panics or loops on any text, and
// what it accepts it accepts again unchanged.
func FuzzTableSQL(f *testing.F) {
	for _, s := range []string{
		"CREATE TABLE a(x TEXT COLLATE NOCASE UNIQUE)",
		"CREATE TABLE a(x INTEGER PRIMARY KEY, y TEXT NOT NULL, UNIQUE(y, x))",
		"CREATE TABLE IF NOT EXISTS \"files\" (path TEXT PRIMARY KEY, parent TEXT GENERATED ALWAYS AS (x) VIRTUAL, shard INT) WITHOUT ROWID",
		"CREATE TABLE t(a, b DESC, -- comment\n c /* more */ REAL, CHECK (a > 0)) STRICT",
		"CREATE TABLE `q`([a b] VARCHAR(10), 'c' BLOB)",
		"CREATE TABLE a(x", ")(", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, sql string) {
		name, _, err := tableSQL("a", sql)
		if err != nil {
			return
		}
		again, _, err := tableSQL("a", sql)
		if err != nil || again != name {
			t.Fatalf("%q: accepted as %q, then %q, %v", sql, name, again, err)
		}
		indexSQL("i", "a", 2, true, "CREATE UNIQUE INDEX i ON a(x, y)")
	})
}

// FuzzIndexSQL: the reader of CREATE INDEX text never panics.
func FuzzIndexSQL(f *testing.F) {
	for _, s := range []string{
		"CREATE INDEX i ON a(x)",
		"CREATE UNIQUE INDEX IF NOT EXISTS \"i\" ON a (x COLLATE BINARY, y DESC)",
		"CREATE INDEX i ON a(x) WHERE x > 0",
		"CREATE INDEX i ON", "",
	} {
		f.Add(s, 2, true)
	}
	f.Fuzz(func(t *testing.T, sql string, ncols int, unique bool) {
		if ncols < 0 || ncols > 64 {
			return
		}
		indexSQL("i", "a", ncols, unique, sql)
	})
}
