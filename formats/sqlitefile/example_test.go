package sqlitefile_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	_ "modernc.org/sqlite"
)

// A table of tar members with an INTEGER PRIMARY KEY, a UNIQUE name (the
// automatic index sqlite_autoindex_members_1) and an index on offsets.
func Example() {
	dir, _ := os.MkdirTemp("", "sqlitefile")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "index.sqlite")
	f, _ := os.Create(path)
	defer f.Close()

	w, _ := sqlitefile.New(f, sqlitefile.Options{})
	t := w.Table("members", "CREATE TABLE members(id INTEGER PRIMARY KEY, name TEXT UNIQUE, offset INTEGER, size INTEGER)").
		RowidColumn(0)
	t.AutoIndex(1)
	w.Index("members_offset", "members", "CREATE INDEX members_offset ON members(offset)", []int{2}, false)
	for i, name := range []string{"b.txt", "a.jpg", "c.cls"} {
		t.Append(sqlitefile.Null(), sqlitefile.Text(name), sqlitefile.Int(int64(512+1024*i)), sqlitefile.Int(100))
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}

	db, _ := sql.Open("sqlite", path)
	defer db.Close()
	rows, _ := db.Query("SELECT id, name, offset FROM members ORDER BY name")
	defer rows.Close()
	for rows.Next() {
		var id, off int64
		var name string
		rows.Scan(&id, &name, &off)
		fmt.Println(id, name, off)
	}
	// Output:
	// 2 a.jpg 1536
	// 1 b.txt 512
	// 3 c.cls 2560
}

// A UNIQUE key twice fails Close with ErrUnique, naming the value.
func ExampleUniqueError() {
	f, _ := os.CreateTemp("", "sqlitefile")
	defer os.Remove(f.Name())
	defer f.Close()
	w, _ := sqlitefile.New(f, sqlitefile.Options{})
	t := w.Table("t", "CREATE TABLE t(k TEXT PRIMARY KEY)")
	t.AutoIndex(0)
	t.Append(sqlitefile.Text("x"))
	t.Append(sqlitefile.Text("x"))
	fmt.Println(w.Close())
	// Output:
	// sqlitefile: UNIQUE constraint failed: index "sqlite_autoindex_t_1" on table "t": ('x') in rows 1 and 2
}
