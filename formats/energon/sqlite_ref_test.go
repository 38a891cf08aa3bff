package energon

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/sqliteuri"
)

// The writer index.sqlite had before sqlitefile: energon's own
// statements, run by SQLite (modernc.org/sqlite). It stays here as the
// reference the file written by sqlitefile is compared with, on more rows
// than the oracle's cases hold, and for the benchmark.

// insertBatch is the number of rows one INSERT statement takes: one
// statement per row would spend most of the load crossing into SQLite.
const insertBatch = 128

// loadIndexSQL creates the tables in the new database file path, inserts
// the rows, creates the indexes, in one transaction, as energon does.
func loadIndexSQL(path string, rows func(fn func(table int, row []sqlitefile.Value) error) error) error {
	uri, err := sqliteuri.File(path, "")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	// The inserts go to the driver's statements directly: database/sql
	// would check and convert every argument.
	return conn.Raw(func(dc any) error {
		exec, ok1 := dc.(driver.ExecerContext)
		prep, ok2 := dc.(driver.ConnPrepareContext)
		if !ok1 || !ok2 {
			return fmt.Errorf("driver connection %T cannot execute or prepare", dc)
		}
		run := func(q string) error {
			if _, err := exec.ExecContext(ctx, q, nil); err != nil {
				return fmt.Errorf("%s: %w", q, err)
			}
			return nil
		}
		// The file is the writer's alone: no journal, no sync, no
		// locking per statement, a 16 MiB page cache.
		for _, q := range []string{
			"PRAGMA journal_mode = OFF",
			"PRAGMA synchronous = OFF",
			"PRAGMA locking_mode = EXCLUSIVE",
			"PRAGMA cache_size = -16384",
			"BEGIN",
		} {
			if err := run(q); err != nil {
				return err
			}
		}
		ins := make([]*inserter, len(indexTables))
		for i, t := range indexTables {
			if err := run(t.Create); err != nil {
				return err
			}
			in, err := newInserter(ctx, prep, t)
			if err != nil {
				return err
			}
			defer in.close()
			ins[i] = in
		}
		err := rows(func(table int, row []sqlitefile.Value) error {
			return ins[table].add(row)
		})
		if err != nil {
			return err
		}
		for _, in := range ins {
			if err := in.flush(); err != nil {
				return err
			}
		}
		for _, x := range indexIndexes {
			if err := run(x.Create); err != nil {
				return err
			}
		}
		return run("COMMIT")
	})
}

// inserter inserts a table's rows insertBatch at a time.
type inserter struct {
	ctx   context.Context
	t     indexTable
	prep  driver.ConnPrepareContext
	batch driver.Stmt // insertBatch rows
	args  []driver.NamedValue
}

func newInserter(ctx context.Context, prep driver.ConnPrepareContext, t indexTable) (*inserter, error) {
	in := &inserter{ctx: ctx, t: t, prep: prep}
	st, err := prep.PrepareContext(ctx, insertSQL(t, insertBatch))
	if err != nil {
		return nil, fmt.Errorf("preparing the insert into %s: %w", t.Name, err)
	}
	in.batch = st
	in.args = make([]driver.NamedValue, 0, insertBatch*len(t.Columns))
	return in, nil
}

// insertSQL is an INSERT of n rows into t.
func insertSQL(t indexTable, n int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", len(t.Columns)), ", ") + ")"
	return "INSERT INTO " + t.Name + " (" + strings.Join(t.Columns, ", ") + ") VALUES " +
		strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

func (in *inserter) add(row []sqlitefile.Value) error {
	if len(row) != len(in.t.Columns) {
		return fmt.Errorf("a row of %d values for the %d columns of %s", len(row), len(in.t.Columns), in.t.Name)
	}
	for _, v := range row {
		var x any
		switch v.Kind() {
		case sqlitefile.KindInt:
			x = v.Int64()
		case sqlitefile.KindText:
			x = v.Text()
		default:
			return fmt.Errorf("a %v in a row of %s", v.Kind(), in.t.Name)
		}
		in.args = append(in.args, driver.NamedValue{Ordinal: len(in.args) + 1, Value: x})
	}
	if len(in.args) == cap(in.args) {
		return in.flush()
	}
	return nil
}

// flush inserts the rows gathered so far.
func (in *inserter) flush() error {
	if len(in.args) == 0 {
		return nil
	}
	st := in.batch
	if n := len(in.args) / len(in.t.Columns); n < insertBatch {
		// The last, shorter batch.
		var err error
		if st, err = in.prep.PrepareContext(in.ctx, insertSQL(in.t, n)); err != nil {
			return fmt.Errorf("preparing the insert into %s: %w", in.t.Name, err)
		}
		defer st.Close()
	}
	if _, err := st.(driver.StmtExecContext).ExecContext(in.ctx, in.args); err != nil {
		return fmt.Errorf("inserting into %s: %w", in.t.Name, err)
	}
	in.args = in.args[:0]
	return nil
}

func (in *inserter) close() { in.batch.Close() }

// writeBoth writes the index of shards with sqlitefile (writeIndex) and
// with SQLite, and gives the two paths.
func writeBoth(t *testing.T, shards []ShardSamples) (got, want string) {
	t.Helper()
	dir := t.TempDir()
	rows := func(fn func(table int, row []sqlitefile.Value) error) error { return tables(shards, fn) }
	got, want = filepath.Join(dir, "got.sqlite"), filepath.Join(dir, "want.sqlite")
	if err := writeIndex(got, 0o644, rows); err != nil {
		t.Fatal(err)
	}
	if err := loadIndexSQL(want, rows); err != nil {
		t.Fatal(err)
	}
	return got, want
}

// randomShards are shards of the given numbers of samples, with keys of
// every kind energon takes: in and out of order, sharing long prefixes,
// non-ASCII, some long enough for their index cells to spill onto
// overflow pages; samples of one to three parts; offsets and sizes of up
// to 48 bits.
func randomShards(seed uint64, counts ...int) []ShardSamples {
	r := rand.New(rand.NewPCG(seed, 1))
	shards := make([]ShardSamples, len(counts))
	n := 0
	for i, count := range counts {
		s := &shards[i]
		s.Name = fmt.Sprintf("part-%d/shard-%04d.tar", i%3, i)
		off := int64(0)
		for j := range count {
			var key string
			switch r.IntN(8) {
			case 0:
				key = fmt.Sprintf("zz/%s/%d", strings.Repeat("long/", 20+r.IntN(1000)), n)
			case 1:
				key = fmt.Sprintf("ünï/çødé/%x", r.Uint64())
			case 2:
				key = fmt.Sprintf("%d", r.IntN(1<<40)<<20|n)
			default:
				key = fmt.Sprintf("images/train/%09d", n)
			}
			n++
			size := int64(1+r.IntN(3)) * 1024
			if r.IntN(50) == 0 {
				size = 1 << (33 + r.IntN(14))
			}
			s.Samples = append(s.Samples, Sample{Key: key, Offset: off, Size: size})
			for k, ext := range []string{"jpg", "cls", "meta.json"}[:size/1024%4] {
				s.Parts = append(s.Parts, Part{Sample: j, Name: ext, Offset: off + 512 + int64(k)*1024, Size: int64(r.IntN(512))})
			}
			off += size
		}
		s.End = off
	}
	return shards
}

// TestIndexMatchesSQLite: on datasets large enough for every b-tree to
// have interior pages and overflow pages, sqlitefile's index.sqlite is
// what SQLite writes from energon's statements, table for table, and
// SQLite finds it sound.
func TestIndexMatchesSQLite(t *testing.T) {
	for i, counts := range [][]int{
		{1},
		{3, 1, 2},
		{6000, 1, 3000, 5000},
		{12000},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			got, want := writeBoth(t, randomShards(uint64(i), counts...))
			compareDBs(t, got, want)
		})
	}
}

// BenchmarkIndexLarge: index.sqlite alone for largeDataset, written by
// sqlitefile and by SQLite, in ns a sample.
//
//	go test ./formats/energon -run '^$' -bench IndexLarge -benchtime 3x
func BenchmarkIndexLarge(b *testing.B) {
	shards := largeDataset()
	rows := func(fn func(table int, row []sqlitefile.Value) error) error { return tables(shards, fn) }
	for _, w := range []struct {
		name  string
		write func(path string) error
	}{
		{"sqlitefile", func(path string) error { return writeIndex(path, 0o644, rows) }},
		{"modernc", func(path string) error { return loadIndexSQL(path, rows) }},
	} {
		b.Run(w.name, func(b *testing.B) {
			dir := b.TempDir()
			var cpu time.Duration
			for i := 0; b.Loop(); i++ {
				path := filepath.Join(dir, fmt.Sprintf("%d.sqlite", i))
				cpu0 := cpuTime()
				if err := w.write(path); err != nil {
					b.Fatal(err)
				}
				cpu += cpuTime() - cpu0
				os.Remove(path)
			}
			reportPerSample(b, cpu)
		})
	}
}

// TestIndexDuplicateKey: rows with a key twice, which WriteMeta refuses
// before it writes, are refused by writeIndex too, as ErrDuplicateKey, and
// leave no file.
func TestIndexDuplicateKey(t *testing.T) {
	shards := randomShards(9, 100, 50)
	shards[1].Samples[7].Key = shards[0].Samples[3].Key
	dir := t.TempDir()
	path := filepath.Join(dir, IndexFile)
	err := writeIndex(path, 0o644, func(fn func(table int, row []sqlitefile.Value) error) error { return tables(shards, fn) })
	var ue *sqlitefile.UniqueError
	if !errors.Is(err, ErrDuplicateKey) || !errors.As(err, &ue) || ue.Values[0].Text() != shards[0].Samples[3].Key {
		t.Errorf("%v, want ErrDuplicateKey and a UniqueError", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left", len(entries))
	}
}
