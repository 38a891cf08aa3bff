package sqlitefile

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// barecatLike is a schema with what Barecat's index has: a generated
// VIRTUAL column (not stored) with an index over it, and a small WITHOUT
// ROWID table.
var barecatLike = []string{
	`CREATE TABLE files
(
    path   TEXT NOT NULL,
    parent TEXT GENERATED ALWAYS AS (rtrim(rtrim(path, replace(path, '/', '')), '/')) VIRTUAL NOT NULL,
    shard  INTEGER NOT NULL,
    size   INTEGER DEFAULT 0
)`,
	`CREATE TABLE config
(
    key        TEXT PRIMARY KEY,
    value_text TEXT    DEFAULT NULL,
    value_int  INTEGER DEFAULT NULL
) WITHOUT ROWID`,
	`CREATE UNIQUE INDEX idx_files_path ON files (path)`,
	`CREATE INDEX idx_files_parent ON files (parent)`,
	`CREATE INDEX idx_files_shard_size ON files (shard, size)`,
}

func parentOf(p string) string {
	return strings.TrimRight(p[:strings.LastIndexByte(p, '/')+1], "/")
}

// TestGeneratedWithoutRowidAnalyze: the rows of a table with a virtual
// column, read back, are those given (parent as SQLite computes it, from
// the index over it too), a WITHOUT ROWID table holds its rows in key
// order, integrity_check passes, and sqlite_stat1 is what SQLite's own
// ANALYZE writes of the same database.
func TestGeneratedWithoutRowidAnalyze(t *testing.T) {
	const n = 3000
	path := create(t, Options{}, func(w *Writer) {
		files := w.Table("files", barecatLike[0])
		config := w.Table("config", barecatLike[1])
		w.Index("idx_files_path", "files", barecatLike[2], []int{0}, true)
		w.Index("idx_files_parent", "files", barecatLike[3], []int{1}, false)
		w.Index("idx_files_shard_size", "files", barecatLike[4], []int{2, 3}, false)
		if err := w.Trigger("t", "files", "CREATE TRIGGER t AFTER INSERT ON files BEGIN SELECT 1; END"); err != nil {
			t.Fatal(err)
		}
		if err := w.Analyze("files", "config"); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			p := fmt.Sprintf("d%02d/s%d/f%05d", (i*7)%31, i%3, i)
			if i%100 == 0 {
				p = fmt.Sprintf("top%d", i)
			}
			if err := files.Append(Text(p), Text(parentOf(p)), Int(int64(i%4)), Int(int64(i%10))); err != nil {
				t.Fatal(err)
			}
		}
		for _, k := range []string{"z", "a", "m"} {
			if err := config.Append(Text(k), Null(), Int(int64(len(k)))); err != nil {
				t.Fatal(err)
			}
		}
	})
	checkIntegrity(t, path)
	db := open(t, path)
	rows := query(t, db, `SELECT rowid, path, parent, shard, size FROM files ORDER BY rowid`)
	if len(rows) != n {
		t.Fatalf("%d rows", len(rows))
	}
	for i, r := range rows {
		p := r[1].(string)
		if r[0].(int64) != int64(i+1) || r[2].(string) != parentOf(p) || r[3].(int64) != int64(i%4) {
			t.Fatalf("row %d: %v", i, r)
		}
	}
	// The index over the virtual column answers as a scan does.
	byIdx := query(t, db, `SELECT count(*) FROM files INDEXED BY idx_files_parent WHERE parent = 'd03/s1'`)
	byScan := query(t, db, `SELECT count(*) FROM files NOT INDEXED WHERE parent = 'd03/s1'`)
	if byIdx[0][0] != byScan[0][0] || byScan[0][0].(int64) == 0 {
		t.Fatalf("parent index %v, scan %v", byIdx, byScan)
	}
	if got := fmt.Sprint(query(t, db, `SELECT key, value_text, value_int FROM config`)); got != "[[a <nil> 1] [m <nil> 1] [z <nil> 1]]" {
		t.Fatalf("config: %s", got)
	}
	schema := fmt.Sprint(query(t, db, `SELECT type, name, tbl_name FROM sqlite_master ORDER BY rowid`))
	if want := "[[table files files] [table config config] [index idx_files_path files] [index idx_files_parent files] [index idx_files_shard_size files] [trigger t files] [table sqlite_stat1 sqlite_stat1]]"; schema != want {
		t.Fatalf("schema:\n got %s\nwant %s", schema, want)
	}
	got := query(t, db, `SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid`)
	// SQLite's ANALYZE of a copy.
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cp := filepath.Join(t.TempDir(), "copy.db")
	if err := os.WriteFile(cp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	adb := open(t, cp)
	if _, err := adb.Exec(`DELETE FROM sqlite_stat1; ANALYZE files; ANALYZE config`); err != nil {
		t.Fatal(err)
	}
	want := query(t, adb, `SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY rowid`)
	if !slices.EqualFunc(got, want, func(a, b []any) bool { return fmt.Sprint(a) == fmt.Sprint(b) }) {
		t.Fatalf("sqlite_stat1:\n got %v\nwant %v", got, want)
	}
	if len(got) != 4 {
		t.Fatalf("sqlite_stat1: %v", got)
	}
}
