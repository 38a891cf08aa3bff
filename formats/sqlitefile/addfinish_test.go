package sqlitefile

import (
	"crypto/sha256"
	"fmt"
	"strings"
	"testing"
)

// TestAddRefusals pins the messages of the rows Append refuses, each
// naming the table and what is wrong with the row.
func TestAddRefusals(t *testing.T) {
	for _, c := range []struct {
		want string
		fill func(w *Writer) error
	}{
		{`sqlitefile: rowid out of order: table "a": the rowid column holds a text, not an integer`, func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY, y)").RowidColumn(0).Append(Text("x"), Null())
		}},
		{`sqlitefile: rowid out of order: table "a": rowid 4 after 5`, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY, y)").RowidColumn(0)
			tb.Append(Int(5), Null())
			return tb.Append(Int(4), Null())
		}},
		{`sqlitefile: unsupported schema: table "a": a row of no values (SQLite's integrity_check refuses an empty record)`, func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(x DEFAULT 1)").Append()
		}},
		{`sqlitefile: unsupported schema: table "a": an index needs column 1, the row has 1 values`, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x, y UNIQUE)")
			tb.AutoIndex(1)
			return tb.Append(Int(1))
		}},
	} {
		if err := refused(c.fill); err == nil || err.Error() != c.want {
			t.Errorf("got %v\nwant %s", err, c.want)
		}
	}
}

// TestFinishBytes pins the bytes Close writes for a database with every
// part finish writes: a multi-page table with overflowing rows and a
// rowid alias, unique and explicit indexes, two AUTOINCREMENT tables
// (so sqlite_sequence has two rows) and a view. The digest is that of the file as
// the writer wrote it before finish and add were split.
func TestFinishBytes(t *testing.T) {
	f := &memFile{}
	w, err := New(f, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY AUTOINCREMENT, k TEXT UNIQUE, v BLOB)").RowidColumn(0).Autoincrement()
	if err := a.AutoIndex(1); err != nil {
		t.Fatal(err)
	}
	if err := w.Index("a_v", "a", "CREATE INDEX a_v ON a(v)", []int{2}, false); err != nil {
		t.Fatal(err)
	}
	b := w.Table("b", "CREATE TABLE b(id INTEGER PRIMARY KEY AUTOINCREMENT, x)").RowidColumn(0).Autoincrement()
	c := w.Table("c", "CREATE TABLE c(x REAL, y)")
	if err := w.View("cv", "CREATE VIEW cv AS SELECT x FROM c"); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		v := []byte(strings.Repeat(fmt.Sprint(i%7), 1+i%50))
		if i%500 == 0 {
			v = []byte(strings.Repeat("z", 9000+i)) // overflow pages
		}
		if err := a.Append(Int(int64(2*i+1)), Text(fmt.Sprintf("k%05d", (i*7919)%3000)), Blob(v)); err != nil {
			t.Fatal(err)
		}
		if err := c.Append(Real(float64(i)/3), Int(int64(-i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Append(Null(), Text("one")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprintf("%d %x", len(f.b), sha256.Sum256(f.b))
	const want = "495616 02d67553275608480f9576c153a2a837db41701751915b10d9c3b49cd6d47ac0"
	if got != want {
		t.Errorf("file %s, want %s", got, want)
	}
}
