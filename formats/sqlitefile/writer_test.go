package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var (
	someInts = []int64{0, 1, -1, 2, 127, -128, 128, -129, 32767, -32768, 32768,
		1<<23 - 1, -1 << 23, 1 << 23, 1<<31 - 1, -1 << 31, 1 << 31,
		1<<47 - 1, -1 << 47, 1 << 47, math.MaxInt64, math.MinInt64}
	someReals = []float64{0.5, -2.25, 3, 0, math.Inf(1), math.Inf(-1), 1e308,
		5e-324, -1e-300, 1 << 53, math.NaN()}
	someTexts = []string{"", "a", "héllo wörld ✓", "with\x00nul", strings.Repeat("x", 200), "'quoted'"}
	someBlobs = [][]byte{{}, {0}, {0xff, 0, 1}, bytes.Repeat([]byte{7}, 300)}
)

// mixed is a value of any kind, picked by i.
func mixed(i int) Value {
	switch i % 5 {
	case 0:
		return Null()
	case 1:
		return Int(someInts[i/5%len(someInts)])
	case 2:
		return Real(someReals[i/5%len(someReals)])
	case 3:
		return Text(someTexts[i/5%len(someTexts)])
	}
	return Blob(someBlobs[i/5%len(someBlobs)])
}

// TestValues: every kind of value in typed and untyped columns reads back
// as modernc's INSERTs store it, over several leaves.
func TestValues(t *testing.T) {
	schema := []stmt{{sql: "CREATE TABLE kinds(i INTEGER, r REAL, s TEXT, b BLOB, a, z)", table: "kinds"}}
	var rows [][]Value
	for j := range 400 {
		rows = append(rows, []Value{
			Int(someInts[j%len(someInts)]),
			Real(someReals[j%len(someReals)]),
			Text(someTexts[j%len(someTexts)]),
			Blob(someBlobs[j%len(someBlobs)]),
			mixed(j),
			Null(),
		})
	}
	rows[3][0], rows[4][1], rows[5][2], rows[6][3] = Null(), Null(), Null(), Null()
	data := map[string][][]Value{"kinds": rows}
	got := load(t, Options{}, schema, data)
	checkIntegrity(t, got)
	same(t, got, twin(t, schema, data))
}

// TestSmall: no tables; an empty table with an index; one row; short
// rows, whose missing columns read as their defaults.
func TestSmall(t *testing.T) {
	path := create(t, Options{}, func(w *Writer) {})
	checkIntegrity(t, path)
	if got := query(t, open(t, path), "SELECT count(*) FROM sqlite_schema"); got[0][0] != int64(0) {
		t.Fatalf("empty schema: %v", got)
	}

	schema := []stmt{
		{sql: "CREATE TABLE empty(a TEXT UNIQUE, b)", table: "empty"},
		{table: "empty", index: "auto", cols: []int{0}},
		{sql: "CREATE INDEX empty_b ON empty(b)", table: "empty", index: "empty_b", cols: []int{1}},
		{sql: "CREATE TABLE one(a, b)", table: "one"},
		{sql: "CREATE INDEX one_ab ON one(a, b)", table: "one", index: "one_ab", cols: []int{0, 1}},
	}
	data := map[string][][]Value{"one": {{Text("x"), Int(1)}}}
	got := load(t, Options{}, schema, data)
	checkIntegrity(t, got)
	same(t, got, twin(t, schema, data))

	path = create(t, Options{}, func(w *Writer) {
		tb := w.Table("short", "CREATE TABLE short(a, b DEFAULT 7, c)")
		for _, v := range []Value{Int(1), Null()} {
			if err := tb.Append(v); err != nil {
				t.Fatal(err)
			}
		}
	})
	checkIntegrity(t, path)
	want := [][]any{{int64(1), int64(7), nil}, {nil, int64(7), nil}}
	if got := query(t, open(t, path), "SELECT * FROM short"); !reflect.DeepEqual(got, want) {
		t.Fatalf("short rows: %v", got)
	}
}

// key is the benchmark's and TestLarge's sample key of row i.
func key(i int) string { return fmt.Sprintf("dir/key%08d", i) }

// TestLarge: 100k rows in multi-level b-trees, an AUTOINCREMENT rowid, a
// UNIQUE text key in shuffled order and a 2-column index, which sqlite's
// planner uses and which give the right rows.
func TestLarge(t *testing.T) {
	const n = 100000
	perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
	path := create(t, Options{}, func(w *Writer) {
		tb := w.Table("samples", `CREATE TABLE samples (
			id INTEGER PRIMARY KEY AUTOINCREMENT,
			tar_file_id INTEGER, sample_key TEXT UNIQUE, sample_index INTEGER,
			byte_offset INTEGER, byte_size INTEGER)`).RowidColumn(0).Autoincrement()
		if err := tb.AutoIndex(2); err != nil {
			t.Fatal(err)
		}
		if err := w.Index("idx_tar", "samples", "CREATE INDEX idx_tar ON samples(tar_file_id, sample_index)", []int{1, 3}, false); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if err := tb.Append(Null(), Int(int64(i/7000)), Text(key(perm[i])), Int(int64(i%7000)),
				Int(int64(i)*1536), Int(int64(perm[i]%5000))); err != nil {
				t.Fatal(err)
			}
		}
	})
	checkIntegrity(t, path)
	db := open(t, path)

	rows, err := db.Query("SELECT * FROM samples")
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	for rows.Next() {
		var id, tar, idx, off, size int64
		var k string
		if err := rows.Scan(&id, &tar, &k, &idx, &off, &size); err != nil {
			t.Fatal(err)
		}
		if id != int64(i+1) || tar != int64(i/7000) || k != key(perm[i]) || idx != int64(i%7000) ||
			off != int64(i)*1536 || size != int64(perm[i]%5000) {
			t.Fatalf("row %d: %d %d %q %d %d %d", i, id, tar, k, idx, off, size)
		}
		i++
	}
	if rows.Close(); i != n {
		t.Fatalf("%d rows, want %d", i, n)
	}

	q := "SELECT id FROM samples WHERE sample_key = ?"
	if p := plan(t, db, q, key(5)); !strings.Contains(p, "INDEX sqlite_autoindex_samples_1") {
		t.Fatalf("plan: %s", p)
	}
	for _, i := range []int{0, 1, 4242, n - 1} {
		got := query(t, db, q, key(perm[i]))
		if len(got) != 1 || got[0][0] != int64(i+1) {
			t.Fatalf("%s %q: %v, want %d", q, key(perm[i]), got, i+1)
		}
	}
	if got := query(t, db, q, key(n)); len(got) != 0 {
		t.Fatalf("absent key: %v", got)
	}
	q = "SELECT id FROM samples WHERE tar_file_id = ? AND sample_index = ?"
	if p := plan(t, db, q, 3, 17); !strings.Contains(p, "INDEX idx_tar") {
		t.Fatalf("plan: %s", p)
	}
	if got := query(t, db, q, 3, 17); len(got) != 1 || got[0][0] != int64(3*7000+17+1) {
		t.Fatalf("%s: %v", q, got)
	}

	q = "SELECT sample_key FROM samples ORDER BY sample_key"
	if p := plan(t, db, q); strings.Contains(p, "TEMP B-TREE") {
		t.Fatalf("plan: %s", p)
	}
	rows, err = db.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	i = 0
	for rows.Next() {
		var k string
		rows.Scan(&k)
		if k != key(i) {
			t.Fatalf("ORDER BY sample_key: #%d is %q", i, k)
		}
		i++
	}
	if rows.Close(); i != n {
		t.Fatalf("ORDER BY: %d rows", i)
	}
	if got := query(t, db, "SELECT * FROM sqlite_sequence"); !reflect.DeepEqual(got, [][]any{{"samples", int64(n)}}) {
		t.Fatalf("sqlite_sequence: %v", got)
	}
}

// TestOverflow: records and index keys around and past what a page keeps,
// on small and large pages, spill to overflow pages that sqlite reads.
func TestOverflow(t *testing.T) {
	for _, ps := range []int{512, 1024, 4096, 65536} {
		t.Run(fmt.Sprint(ps), func(t *testing.T) {
			u := ps
			x := u - 35
			m := (u-12)*32/255 - 23
			var sizes []int
			for _, c := range []int{x, (u-12)*64/255 - 23, m, u - 4, 2 * u, 5*u + 17, 3 * (u - 4)} {
				for d := -3; d <= 3; d++ {
					if c+d > 0 {
						sizes = append(sizes, c+d)
					}
				}
			}
			sizes = append(sizes, 0, 1, 300000)
			schema := []stmt{
				{sql: "CREATE TABLE big(n INTEGER, body TEXT UNIQUE, data BLOB)", table: "big"},
				{table: "big", index: "auto", cols: []int{1}},
				{sql: "CREATE INDEX big_data ON big(data, n)", table: "big", index: "big_data", cols: []int{2, 0}},
			}
			var rows [][]Value
			r := rand.New(rand.NewPCG(uint64(ps), 9))
			for i, s := range sizes {
				b := make([]byte, s)
				for j := range b {
					b[j] = byte('a' + r.IntN(26))
				}
				rows = append(rows, []Value{Int(int64(i)), Text(fmt.Sprintf("%06d", i) + string(b)), Blob(b)})
			}
			data := map[string][][]Value{"big": rows}
			got := load(t, Options{PageSize: ps}, schema, data)
			checkIntegrity(t, got)
			same(t, got, twin(t, schema, data))
			db := open(t, got)
			for _, i := range []int{3, len(rows) - 1} {
				body := rows[i][1].s
				if p := plan(t, db, "SELECT n FROM big WHERE body = ?", body); !strings.Contains(p, "sqlite_autoindex_big_1") {
					t.Fatalf("plan: %s", p)
				}
				if g := query(t, db, "SELECT n FROM big WHERE body = ?", body); len(g) != 1 || g[0][0] != int64(i) {
					t.Fatalf("lookup %d: %v", i, g)
				}
			}
		})
	}
}

// mixedOrder is a value for the index-order test: every kind, numbers
// that compare across INTEGER and REAL (equal ones, ones that float64
// cannot tell apart), texts with shared prefixes.
func mixedOrder(r *rand.Rand) Value {
	switch r.IntN(9) {
	case 0:
		return Null()
	case 1:
		return Int(r.Int64N(21) - 10)
	case 2:
		return Real(float64(r.IntN(21)-10) / 2)
	case 3:
		return Int(1<<53 + r.Int64N(5) - 2)
	case 4:
		return Real([]float64{1 << 53, 1<<53 + 2, 1 << 63, -(1 << 63), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1)}[r.IntN(8)])
	case 5:
		return Int([]int64{math.MaxInt64, math.MinInt64, math.MaxInt64 - 1}[r.IntN(3)])
	case 6:
		return Text("common/prefix/" + []string{"", "a", "a\x00", "ab", "b", "é"}[r.IntN(6)])
	case 7:
		return Text(fmt.Sprint(r.IntN(50)))
	}
	return Blob([]byte("common/prefix/" + []string{"", "a", "ab", "\xff"}[r.IntN(4)]))
}

// TestIndexOrder: indexes over columns of mixed kinds, in random order,
// sort as sqlite sorts them: integrity_check agrees, and ORDER BY through
// them gives the rows in the order modernc's own index gives them.
func TestIndexOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	schema := []stmt{
		{sql: "CREATE TABLE m(a, b, c INTEGER)", table: "m"},
		{sql: "CREATE INDEX m_a ON m(a)", table: "m", index: "m_a", cols: []int{0}},
		{sql: "CREATE INDEX m_ba ON m(b, a)", table: "m", index: "m_ba", cols: []int{1, 0}},
		{sql: "CREATE INDEX m_cb ON m (c COLLATE BINARY ASC, b)", table: "m", index: "m_cb", cols: []int{2, 1}},
	}
	var rows [][]Value
	for i := range 3000 {
		rows = append(rows, []Value{mixedOrder(r), mixedOrder(r), Int(int64(i % 3))})
	}
	data := map[string][][]Value{"m": rows}
	got, want := load(t, Options{PageSize: 1024}, schema, data), twin(t, schema, data)
	checkIntegrity(t, got)
	same(t, got, want)
	g, w := open(t, got), open(t, want)
	for _, q := range []string{
		"SELECT rowid, a FROM m INDEXED BY m_a ORDER BY a",
		"SELECT rowid FROM m INDEXED BY m_ba ORDER BY b, a",
		"SELECT rowid FROM m INDEXED BY m_cb ORDER BY c, b",
		"SELECT rowid FROM m INDEXED BY m_a WHERE a = 2",
		"SELECT rowid FROM m INDEXED BY m_a WHERE a > 1 AND a < 9007199254740993",
		"SELECT rowid FROM m INDEXED BY m_ba WHERE b = 'common/prefix/a'",
	} {
		if gr, wr := query(t, g, q), query(t, w, q); !reflect.DeepEqual(gr, wr) {
			t.Fatalf("%s:\n got %v\nwant %v", q, clip(gr), clip(wr))
		}
	}
}

// TestSorted: keys that come in order (the usual case) are written as
// they come, NULLs and equal keys included.
func TestSorted(t *testing.T) {
	schema := []stmt{
		{sql: "CREATE TABLE s(a, b)", table: "s"},
		{sql: "CREATE INDEX s_ab ON s(a, b)", table: "s", index: "s_ab", cols: []int{0, 1}},
	}
	var rows [][]Value
	for i := range 5000 {
		a := Null()
		if i >= 100 {
			a = Int(int64(i / 10))
		}
		rows = append(rows, []Value{a, Text(key(i % 7))})
	}
	data := map[string][][]Value{"s": rows}
	got := load(t, Options{PageSize: 512}, schema, data)
	checkIntegrity(t, got)
	same(t, got, twin(t, schema, data))
}

// TestUnique: a UNIQUE key twice is ErrUnique, a *UniqueError that names
// the index and the value; NULLs are not duplicates; 1 and 1.0 are.
func TestUnique(t *testing.T) {
	write := func(rows ...[]Value) error {
		f, err := os.Create(t.TempDir() + "/u.db")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		w, _ := New(f, Options{})
		tb := w.Table("u", "CREATE TABLE u(a, b, c, UNIQUE(a, b))")
		if err := tb.AutoIndex(0, 1); err != nil {
			t.Fatal(err)
		}
		if err := w.Index("u_c", "u", "CREATE UNIQUE INDEX u_c ON u(c)", []int{2}, true); err != nil {
			t.Fatal(err)
		}
		for _, r := range rows {
			if err := tb.Append(r...); err != nil {
				t.Fatal(err)
			}
		}
		return w.Close()
	}
	err := write(
		[]Value{Text("x"), Int(1), Int(1)},
		[]Value{Text("y"), Int(1), Int(2)},
		[]Value{Text("x"), Null(), Null()},
		[]Value{Text("x"), Null(), Null()},
		[]Value{Text("x"), Int(1), Int(3)},
	)
	var ue *UniqueError
	if !errors.Is(err, ErrUnique) || !errors.As(err, &ue) {
		t.Fatalf("err = %v, want ErrUnique", err)
	}
	if ue.Index != "sqlite_autoindex_u_1" || ue.Table != "u" || !reflect.DeepEqual(ue.Values, []Value{Text("x"), Int(1)}) || ue.Rowids != [2]int64{1, 5} {
		t.Fatalf("%#v", ue)
	}
	if !strings.Contains(err.Error(), "('x', 1)") {
		t.Fatalf("message: %v", err)
	}
	err = write([]Value{Int(1), Int(1), Int(1)}, []Value{Int(1), Int(2), Real(1)})
	if !errors.As(err, &ue) || ue.Index != "u_c" || ue.Values[0] != Int(1) {
		t.Fatalf("1 and 1.0: %v", err)
	}
	if err := write([]Value{Int(1), Int(1), Int(1)}, []Value{Int(1), Real(1.5), Real(1.5e300)}); err != nil {
		t.Fatal(err)
	}
}

// TestSchema: CREATE statements in various spellings are kept as sqlite
// keeps them, automatic indexes get sqlite's names, an INTEGER PRIMARY
// KEY is the rowid, AUTOINCREMENT makes sqlite_sequence in its place.
func TestSchema(t *testing.T) {
	schema := []stmt{
		{sql: `create   table  if not exists "Foo" (a INTEGER, b TEXT UNIQUE, c, PRIMARY KEY(a,c), UNIQUE(b)) ;  `, table: "Foo"},
		{table: "Foo", index: "auto", cols: []int{1}},
		{table: "Foo", index: "auto", cols: []int{0, 2}},
		{sql: "CREATE TABLE /* c */ main.bar(x integer primary key, y real unique)  -- trailing\n", table: "bar"},
		{table: "bar", index: "auto", cols: []int{1}},
		{sql: "create unique index  IF NOT EXISTS ix1 on Foo(c, b)  ;", table: "Foo", index: "ix1", cols: []int{2, 1}, unique: true},
		{sql: "CREATE INDEX ix2 ON bar(y)\n", table: "bar", index: "ix2", cols: []int{1}},
		{sql: "CREATE INDEX ix3 ON bar(x, y) -- last", table: "bar", index: "ix3", cols: []int{0, 1}},
		{sql: "CREATE TABLE s (k TEXT PRIMARY KEY, v ANY) STRICT ", table: "s"},
		{table: "s", index: "auto", cols: []int{0}},
		{sql: "CREATE TABLE [weird name] (`a b` INT, 'c''d' TEXT)", table: "weird name"},
		{sql: "CREATE TABLE tf(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE)", table: "tf"},
		{table: "tf", index: "auto", cols: []int{1}},
		{sql: "CREATE TABLE later(id INTEGER PRIMARY KEY AUTOINCREMENT, v)", table: "later"},
		{sql: "CREATE TABLE none(id INTEGER PRIMARY KEY AUTOINCREMENT, v)", table: "none"},
		// Like a ratarmount index: sized types, comments in the column
		// list (one with a parenthesis), a composite PRIMARY KEY.
		{sql: `CREATE TABLE "files" (
			"path"     VARCHAR(65535) NOT NULL, /* parent folder (no trailing slash) */
			"name"     VARCHAR(65535) NOT NULL,
			"offset"   INTEGER, -- where the content starts)
			"isdir"    BOOL DEFAULT ')',
			PRIMARY KEY (path, name, offset)
		);`, table: "files"},
		{table: "files", index: "auto", cols: []int{0, 1, 2}},
	}
	data := map[string][][]Value{
		"Foo":        {{Int(1), Text("b1"), Int(2)}, {Int(1), Text("b2"), Int(3)}, {Null(), Null(), Null()}},
		"bar":        {{Int(10), Real(0.5)}, {Null(), Real(2)}, {Int(35), Null()}, {Int(36), Real(-1)}},
		"s":          {{Text("k"), Blob([]byte("v"))}, {Text("j"), Int(3)}},
		"weird name": {{Int(5), Text("t")}},
		"tf":         {{Null(), Text("a.tar")}, {Int(7), Text("b.tar")}},
		"later":      {{Null(), Int(1)}},
		"files":      {{Text("/a"), Text("b"), Int(512), Int(0)}, {Text("/a"), Text("b"), Int(1024), Int(1)}, {Text(""), Text("a"), Int(0), Int(1)}},
	}
	got := create(t, Options{}, func(w *Writer) {
		tables := declare(t, w, schema)
		tables["bar"].RowidColumn(0)
		tables["tf"].RowidColumn(0).Autoincrement()
		tables["later"].RowidColumn(0).Autoincrement()
		tables["none"].RowidColumn(0).Autoincrement()
		for _, s := range schema {
			for _, r := range data[s.table] {
				if s.index == "" {
					if err := tables[s.table].Append(r...); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
	})
	checkIntegrity(t, got)
	same(t, got, twin(t, schema, data))
	db := open(t, got)
	if p := plan(t, db, "SELECT * FROM bar WHERE y = 2"); !strings.Contains(p, "INDEX") {
		t.Fatalf("plan: %s", p)
	}
	if got := query(t, db, "SELECT x FROM bar WHERE y = 2"); !reflect.DeepEqual(got, [][]any{{int64(11)}}) {
		t.Fatalf("bar: %v", got)
	}
	// The file is an ordinary database: sqlite writes to it.
	if _, err := db.Exec("INSERT INTO tf(name) VALUES('c.tar'); INSERT INTO bar(y) VALUES(9.5)"); err != nil {
		t.Fatal(err)
	}
	if got := query(t, db, "SELECT max(id) FROM tf"); got[0][0] != int64(8) {
		t.Fatalf("tf after insert: %v", got)
	}
	db.Close()
	checkIntegrity(t, got)
}

// TestBigSchema: a schema that does not fit in page 1 (an interior root
// there, after the file header) and CREATE statements longer than a page.
func TestBigSchema(t *testing.T) {
	var schema []stmt
	data := map[string][][]Value{}
	for i := range 40 {
		name := fmt.Sprintf("t%02d", i)
		var cols []string
		for c := range 10 + i*3 {
			cols = append(cols, fmt.Sprintf("column_%03d INTEGER", c))
		}
		schema = append(schema,
			stmt{sql: "CREATE TABLE " + name + "(" + strings.Join(cols, ", ") + ")", table: name},
			stmt{sql: "CREATE INDEX " + name + "_i ON " + name + "(column_001)", table: name, index: name + "_i", cols: []int{1}})
		row := make([]Value, 10+i*3)
		for c := range row {
			row[c] = Int(int64(c * i))
		}
		data[name] = [][]Value{row}
	}
	got := load(t, Options{PageSize: 512}, schema, data)
	if b, err := os.ReadFile(got); err != nil || b[100] != interiorTable {
		t.Fatalf("page 1 is no interior page: %v", err)
	}
	checkIntegrity(t, got)
	same(t, got, twin(t, schema, data))
}

// TestHeader: the file header holds what sqlite3 writes.
func TestHeader(t *testing.T) {
	path := create(t, Options{PageSize: 1024}, func(w *Writer) {
		tb := w.Table("t", "CREATE TABLE t(a)")
		for i := range 2000 {
			tb.Append(Int(int64(i)))
		}
	})
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	be := binary.BigEndian
	if string(b[:16]) != "SQLite format 3\x00" || be.Uint16(b[16:]) != 1024 || b[18] != 1 || b[19] != 1 || b[20] != 0 ||
		b[21] != 64 || b[22] != 32 || b[23] != 32 || be.Uint32(b[24:]) != be.Uint32(b[92:]) ||
		int(be.Uint32(b[28:]))*1024 != len(b) || be.Uint32(b[32:]) != 0 || be.Uint32(b[36:]) != 0 ||
		be.Uint32(b[44:]) != 4 || be.Uint32(b[48:]) != 0 || be.Uint32(b[52:]) != 0 || be.Uint32(b[56:]) != 1 ||
		be.Uint32(b[60:]) != 0 || be.Uint32(b[64:]) != 0 || be.Uint32(b[68:]) != 0 || be.Uint32(b[96:]) != DefaultVersion {
		t.Fatalf("header: % x", b[:100])
	}
	db := open(t, path)
	for q, want := range map[string]any{
		"PRAGMA page_size": int64(1024), "PRAGMA freelist_count": int64(0), "PRAGMA encoding": "UTF-8",
		"PRAGMA auto_vacuum": int64(0), "PRAGMA user_version": int64(0), "PRAGMA application_id": int64(0),
		"PRAGMA page_count": int64(len(b) / 1024), "SELECT sum(a) FROM t": int64(1999 * 2000 / 2),
	} {
		if got := query(t, db, q); got[0][0] != want {
			t.Errorf("%s = %v, want %v", q, got[0][0], want)
		}
	}
}

// memFile is an io.WriteSeeker in memory.
type memFile struct {
	b   []byte
	off int64
}

func (m *memFile) Write(p []byte) (int, error) {
	if end := int(m.off) + len(p); end > len(m.b) {
		m.b = append(m.b, make([]byte, end-len(m.b))...)
	}
	copy(m.b[m.off:], p)
	m.off += int64(len(p))
	return len(p), nil
}

func (m *memFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += m.off
	case io.SeekEnd:
		off += int64(len(m.b))
	}
	m.off = off
	return off, nil
}

// TestWriteSeeker: any io.WriteSeeker takes a database, from its current
// offset, the same bytes as a file.
func TestWriteSeeker(t *testing.T) {
	fill := func(w *Writer) {
		tb := w.Table("t", "CREATE TABLE t(a UNIQUE)")
		tb.AutoIndex(0)
		for i := range 3000 {
			tb.Append(Text(key(i)))
		}
	}
	want, err := os.ReadFile(create(t, Options{}, fill))
	if err != nil {
		t.Fatal(err)
	}
	m := &memFile{b: []byte("prefix"), off: 6}
	w, _ := New(m, Options{})
	fill(w)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(m.b[6:], want) || string(m.b[:6]) != "prefix" {
		t.Fatal("bytes differ")
	}
}

// TestErrors: what the writer refuses, and how it says so.
func TestErrors(t *testing.T) {
	try := func(fill func(w *Writer) error) error {
		w, _ := New(&memFile{}, Options{})
		if err := fill(w); err != nil {
			return err
		}
		return w.Close()
	}
	for _, c := range []struct {
		name string
		want error
		fill func(w *Writer) error
	}{
		{"name mismatch", ErrSchema, func(w *Writer) error { w.Table("a", "CREATE TABLE b(x)"); return nil }},
		{"reserved", ErrSchema, func(w *Writer) error { w.Table("sqlite_x", "CREATE TABLE sqlite_x(x)"); return nil }},
		{"twice", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x)")
			return w.Index("A", "a", "CREATE INDEX A ON a(x)", []int{0}, false)
		}},
		{"without rowid, key not first", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(y, x PRIMARY KEY) WITHOUT ROWID")
			return nil
		}},
		{"index on a without rowid table", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x PRIMARY KEY, y) WITHOUT ROWID")
			return w.Index("ay", "a", "CREATE INDEX ay ON a (y)", []int{1}, false)
		}},
		{"without rowid, repeated key", ErrUnique, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x PRIMARY KEY, y) WITHOUT ROWID")
			tb.Append(Text("k"), Int(1))
			tb.Append(Text("k"), Int(2))
			return w.Close()
		}},
		{"as select", ErrSchema, func(w *Writer) error { w.Table("a", "CREATE TABLE a AS SELECT 1"); return nil }},
		{"temp", ErrSchema, func(w *Writer) error { w.Table("a", "CREATE TEMP TABLE a(x)"); return nil }},
		{"no table", ErrSchema, func(w *Writer) error {
			return w.Index("i", "a", "CREATE INDEX i ON a(x)", []int{0}, false)
		}},
		{"desc", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x)")
			return w.Index("i", "a", "CREATE INDEX i ON a(x DESC)", []int{0}, false)
		}},
		{"nocase", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x)")
			return w.Index("i", "a", "CREATE INDEX i ON a(x COLLATE NOCASE)", []int{0}, false)
		}},
		{"expression", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x)")
			return w.Index("i", "a", "CREATE INDEX i ON a(x+1)", []int{0}, false)
		}},
		{"partial", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x)")
			return w.Index("i", "a", "CREATE INDEX i ON a(x) WHERE x > 0", []int{0}, false)
		}},
		{"column count", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x, y)")
			return w.Index("i", "a", "CREATE INDEX i ON a(x, y)", []int{0}, false)
		}},
		{"unique flag", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x)")
			return w.Index("i", "a", "CREATE INDEX i ON a(x)", []int{0}, true)
		}},
		{"index after rows", ErrSchema, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x)")
			tb.Append(Int(1))
			return tb.AutoIndex(0)
		}},
		{"short row", ErrSchema, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x, y UNIQUE)")
			tb.AutoIndex(1)
			return tb.Append(Int(1))
		}},
		{"no values", ErrSchema, func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(x DEFAULT 1)").Append()
		}},
		{"autoincrement", ErrSchema, func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY AUTOINCREMENT)").Autoincrement()
			return nil
		}},
		{"rowid order", ErrRowid, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY, y)").RowidColumn(0)
			tb.Append(Int(5), Null())
			return tb.Append(Int(5), Null())
		}},
		{"closed", ErrClosed, func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x)")
			w.Close()
			return tb.Append(Int(1))
		}},
	} {
		if err := try(c.fill); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := New(&memFile{}, Options{PageSize: 1000}); err == nil {
		t.Error("page size 1000 accepted")
	}
}

func TestVarint(t *testing.T) {
	var b [9]byte
	for _, v := range []uint64{0, 0x7f, 0x80, 0x3fff, 0x4000, 1<<21 - 1, 1 << 21, 1<<56 - 1, 1 << 56, math.MaxUint64} {
		n := putVarint(b[:], v)
		g, m := getVarint(b[:])
		if n != varintLen(v) || m != n || g != v {
			t.Errorf("%#x: len %d/%d/%d, read %#x", v, n, varintLen(v), m, g)
		}
	}
}

// TestViewTrigger: a view and a trigger are rows of sqlite_schema in their
// place among the other objects, with root page 0, and SQLite compiles
// them: an INSTEAD OF trigger inserts through the view.
func TestViewTrigger(t *testing.T) {
	path := create(t, Options{}, func(w *Writer) {
		tb := w.Table("t", "CREATE TABLE t(k TEXT, v INTEGER)")
		if err := w.View("tv", "CREATE VIEW tv AS SELECT k, v*2 AS w FROM t"); err != nil {
			t.Fatal(err)
		}
		if err := w.Trigger("tv_insert", "tv", "CREATE TRIGGER tv_insert INSTEAD OF INSERT ON tv BEGIN INSERT INTO t VALUES (NEW.k, NEW.w/2); END"); err != nil {
			t.Fatal(err)
		}
		tb.Append(Text("a"), Int(1))
	})
	checkIntegrity(t, path)
	db := open(t, path)
	got := query(t, db, "SELECT type, name, tbl_name, rootpage FROM sqlite_schema ORDER BY rowid")
	want := [][]any{{"table", "t", "t", int64(2)}, {"view", "tv", "tv", int64(0)}, {"trigger", "tv_insert", "tv", int64(0)}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sqlite_schema %v, want %v", got, want)
	}
	if _, err := db.Exec("INSERT INTO tv VALUES ('b', 8)"); err != nil {
		t.Fatal(err)
	}
	if got := query(t, db, "SELECT k, w FROM tv ORDER BY k"); fmt.Sprint(got) != "[[a 2] [b 8]]" {
		t.Errorf("through the view: %v", got)
	}
}

// refused runs fill on a new writer and gives the first error it or Close
// returns.
func refused(fill func(w *Writer) error) error {
	w, _ := New(&memFile{}, Options{})
	if err := fill(w); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}

// TestRefuseCollate: a collation other than BINARY, on a column or in a
// key, is refused where the table is declared: the writer orders keys by
// their bytes, and SQLite would read a NOCASE index in the wrong order.
func TestRefuseCollate(t *testing.T) {
	for _, sql := range []string{
		"CREATE TABLE a(x TEXT COLLATE NOCASE UNIQUE)",
		"CREATE TABLE a(x TEXT COLLATE RTRIM)",
		"CREATE TABLE a(x TEXT, y, UNIQUE(x COLLATE NOCASE))",
		"CREATE TABLE a(x TEXT, PRIMARY KEY(x COLLATE \"nocase\"))",
	} {
		err := refused(func(w *Writer) error { return w.Table("a", sql).Append(Text("A")) })
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "COLLATE") {
			t.Errorf("%s: %v, want ErrSchema naming COLLATE", sql, err)
		}
	}
	if err := refused(func(w *Writer) error {
		return w.Table("a", "CREATE TABLE a(x TEXT COLLATE BINARY)").Append(Text("A"))
	}); err != nil {
		t.Errorf("COLLATE BINARY: %v", err)
	}
}

// TestRefuseDesc: DESC in a PRIMARY KEY or UNIQUE constraint is refused:
// SQLite keeps such an index in descending order, the writer ascending.
func TestRefuseDesc(t *testing.T) {
	for _, sql := range []string{
		"CREATE TABLE a(x TEXT PRIMARY KEY DESC)",
		"CREATE TABLE a(x INTEGER PRIMARY KEY DESC)", // not the rowid, then
		"CREATE TABLE a(x, y, PRIMARY KEY(x, y DESC))",
		"CREATE TABLE a(x, y, UNIQUE(x DESC))",
	} {
		err := refused(func(w *Writer) error { return w.Table("a", sql).Append(Int(1), Int(2)) })
		if !errors.Is(err, ErrSchema) || !strings.Contains(err.Error(), "DESC") {
			t.Errorf("%s: %v, want ErrSchema naming DESC", sql, err)
		}
	}
	if err := refused(func(w *Writer) error {
		tb := w.Table("a", "CREATE TABLE a(x, y, PRIMARY KEY(x ASC, y))")
		tb.AutoIndex(0, 1)
		return tb.Append(Int(1), Int(2))
	}); err != nil {
		t.Errorf("ASC: %v", err)
	}
}

// TestRefuseIndexColumns: the columns given for an index must be those
// its statement names, and the automatic indexes and the rowid column
// those of the table's statement.
func TestRefuseIndexColumns(t *testing.T) {
	for _, c := range []struct {
		name string
		fill func(w *Writer) error
	}{
		{"index column", func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x, y)")
			return w.Index("i", "a", "CREATE INDEX i ON a(y)", []int{0}, false)
		}},
		{"index column order", func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x, y)")
			return w.Index("i", "a", "CREATE INDEX i ON a(y, x)", []int{0, 1}, false)
		}},
		{"index of no column", func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x, y)")
			return w.Index("i", "a", "CREATE INDEX i ON a(z)", []int{0}, false)
		}},
		{"auto index columns", func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(x, y UNIQUE)").AutoIndex(0)
		}},
		{"auto index order", func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x UNIQUE, y, PRIMARY KEY(y, x))")
			tb.AutoIndex(1, 0)
			return tb.AutoIndex(0)
		}},
		{"auto index missing", func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(x, y UNIQUE)").Append(Int(1), Int(2))
		}},
		{"auto index missing, no rows", func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(x, y, PRIMARY KEY(x, y))")
			return nil
		}},
		{"auto index too many", func(w *Writer) error {
			tb := w.Table("a", "CREATE TABLE a(x UNIQUE, y, UNIQUE(x))") // one index: the same columns
			tb.AutoIndex(0)
			return tb.AutoIndex(0)
		}},
		{"auto index for the rowid", func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY, y)").AutoIndex(0)
		}},
		{"rowid column", func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(id INTEGER PRIMARY KEY, y)").RowidColumn(1)
			return nil
		}},
		{"rowid of a table without", func(w *Writer) error {
			w.Table("a", "CREATE TABLE a(id INT PRIMARY KEY, y)").RowidColumn(0)
			return nil
		}},
		{"rowid missing", func(w *Writer) error {
			return w.Table("a", "CREATE TABLE a(y, id INTEGER, PRIMARY KEY(id))").Append(Int(1), Int(2))
		}},
	} {
		if err := refused(c.fill); !errors.Is(err, ErrSchema) {
			t.Errorf("%s: %v, want ErrSchema", c.name, err)
		}
	}
}

// TestRefuseAffinity: a value SQLite's INSERT would convert (its column's
// affinity) or refuse is refused at Append, and the writer goes on; what
// SQLite stores as given is taken. The premise is checked on SQLite.
func TestRefuseAffinity(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "twin.db"))
	if got := query(t, db, "CREATE TABLE p(i INTEGER); INSERT INTO p VALUES('12'); SELECT typeof(i) FROM p"); got[0][0] != "integer" {
		t.Fatalf("SQLite stores '12' in an INTEGER column as %v", got[0][0])
	}
	schema := "CREATE TABLE a(i INTEGER, n NUMERIC, r REAL, s VARCHAR(10), b BLOB, u, nn TEXT NOT NULL)"
	for _, c := range []struct {
		row  []Value
		want string // "" if taken
	}{
		{[]Value{Text("12")}, `text '12' in a column of INTEGER affinity`},
		{[]Value{Text(" -1.5e3 ")}, `text ' -1.5e3 '`},
		{[]Value{Null(), Text("7")}, `column "n"`},
		{[]Value{Null(), Real(3)}, `REAL 3 in a column of NUMERIC affinity`},
		{[]Value{Real(-0.0)}, `REAL`},
		{[]Value{Null(), Null(), Text(".5")}, `REAL affinity`},
		{[]Value{Null(), Null(), Null(), Int(12)}, `integer 12 in a column of TEXT affinity (VARCHAR)`},
		{[]Value{Null(), Null(), Null(), Real(0.5)}, `TEXT affinity`},
		{[]Value{Null(), Null(), Null(), Null(), Null(), Null(), Null()}, `NULL in a NOT NULL column`},
		{[]Value{Null(), Null(), Null(), Null(), Null(), Null(), Text("x"), Int(1)}, `8 values`},
		{[]Value{Text("12x"), Real(2.5), Real(3), Text("12"), Text("12"), Text("12"), Text("x")}, ""},
		{[]Value{Text("0x10"), Int(2), Int(3), Blob([]byte("12")), Int(1), Real(1), Text("")}, ""},
		{[]Value{Text("1e"), Text("."), Text("-"), Text("abc"), Null(), Null(), Text("x")}, ""},
		{[]Value{Real(1e300), Real(math.Inf(1)), Null(), Null(), Null(), Null(), Text("x")}, ""},
	} {
		w, _ := New(&memFile{}, Options{})
		err := w.Table("a", schema).Append(c.row...)
		if c.want == "" {
			if err != nil {
				t.Errorf("%v: %v", c.row, err)
			}
			continue
		}
		if !errors.Is(err, ErrType) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want ErrType saying %s", c.row, err, c.want)
		}
		if err := w.Close(); err != nil { // the row refused, the writer goes on
			t.Errorf("%v: Close: %v", c.row, err)
		}
	}
	strict := "CREATE TABLE s(i INTEGER, r REAL, t TEXT, b BLOB, a ANY) STRICT"
	for _, row := range [][]Value{{Real(1)}, {Text("1")}, {Null(), Text("1.5")}, {Null(), Null(), Int(1)}, {Null(), Null(), Null(), Text("x")}} {
		w, _ := New(&memFile{}, Options{})
		if err := w.Table("s", strict).Append(row...); !errors.Is(err, ErrType) {
			t.Errorf("STRICT %v: %v, want ErrType", row, err)
		}
	}
	w, _ := New(&memFile{}, Options{})
	if err := w.Table("s", strict).Append(Int(1), Int(2), Text("t"), Blob(nil), Text("a")); err != nil {
		t.Errorf("STRICT: %v", err)
	}
	if err := refused(func(w *Writer) error { w.Table("s", "CREATE TABLE s(x VARCHAR) STRICT"); return nil }); !errors.Is(err, ErrSchema) {
		t.Errorf("STRICT VARCHAR: %v", err)
	}
	if err := refused(func(w *Writer) error {
		w.Table("g", "CREATE TABLE g(x PRIMARY KEY, y AS (x+1)) WITHOUT ROWID")
		return nil
	}); !errors.Is(err, ErrSchema) {
		t.Errorf("generated column in a WITHOUT ROWID table: %v", err)
	}
}
