package energon

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"

	"github.com/itarconv/itarconv/internal/safefile"
)

// insertBatch is the number of rows one INSERT statement takes: one
// statement per row would spend most of the load crossing into SQLite.
const insertBatch = 128

// writeIndex writes index.sqlite at path, in one transaction, from the
// rows rows gives (see tables): under a temporary name in the same
// directory, synced, then renamed into place, with the given mode.
//
// The temporary file is nobody else's until the rename, and a failure
// throws it away: so no rollback journal (journal_mode=OFF, which leaves
// no -journal file beside it and is not stored in the file: energon's
// loader opens it as any database), no sync but the one before the rename,
// and no locking per statement.
func writeIndex(path string, mode fs.FileMode, rows func(fn func(table string, row []any) error) error) (err error) {
	dir, base := filepath.Split(path)
	safefile.SweepLeftovers(dir)
	f, err := os.CreateTemp(dir, safefile.TempName(base))
	if err != nil {
		return fmt.Errorf("energon: creating %s: %w", path, err)
	}
	tmp := f.Name()
	f.Close()
	defer func() {
		if err != nil {
			os.Remove(tmp)
			os.Remove(tmp + "-journal")
		}
	}()
	if err := loadIndex(tmp, rows); err != nil {
		return fmt.Errorf("energon: writing %s: %w", path, err)
	}
	if f, err = os.OpenFile(tmp, os.O_RDWR, 0); err == nil {
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Chmod(tmp, mode)
	}
	if err != nil {
		return fmt.Errorf("energon: writing %s: %w", path, err)
	}
	// A journal left beside the old file by a writer that crashed would
	// be taken for the new file's, and "rolled back" into it.
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("energon: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("energon: %w", err)
	}
	safefile.SyncDir(dir)
	return nil
}

// loadIndex creates the tables in the empty database file path, inserts
// the rows, creates the indexes.
func loadIndex(path string, rows func(fn func(table string, row []any) error) error) error {
	uri, err := sqliteURI(path, "")
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
				return fmt.Errorf("%s: %w", firstLine(q), err)
			}
			return nil
		}
		for _, q := range []string{
			"PRAGMA journal_mode = OFF",
			"PRAGMA synchronous = OFF",
			"PRAGMA locking_mode = EXCLUSIVE",
			// 16 MiB of page cache: SQLite's default 2 MiB made a
			// million random keys a third slower; more only cost the
			// time to allocate and free it.
			"PRAGMA cache_size = -16384", // KiB
			"BEGIN",
		} {
			if err := run(q); err != nil {
				return err
			}
		}
		ins := make(map[string]*inserter, len(indexTables))
		for _, t := range indexTables {
			if err := run(t.Create); err != nil {
				return err
			}
			in, err := newInserter(ctx, prep, t)
			if err != nil {
				return err
			}
			defer in.close()
			ins[t.Name] = in
		}
		err := rows(func(table string, row []any) error {
			in := ins[table]
			if in == nil {
				return fmt.Errorf("no table %s", table)
			}
			return in.add(row)
		})
		if err != nil {
			return err
		}
		for _, t := range indexTables {
			if err := ins[t.Name].flush(); err != nil {
				return err
			}
		}
		for _, q := range indexIndexes {
			if err := run(q); err != nil {
				return err
			}
		}
		return run("COMMIT")
	})
}

// firstLine names a statement in an error.
func firstLine(q string) string {
	q, _, _ = strings.Cut(q, "\n")
	return q
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

func (in *inserter) add(row []any) error {
	if len(row) != len(in.t.Columns) {
		return fmt.Errorf("a row of %d values for the %d columns of %s", len(row), len(in.t.Columns), in.t.Name)
	}
	for _, v := range row {
		in.args = append(in.args, driver.NamedValue{Ordinal: len(in.args) + 1, Value: v})
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

// sqliteURI is the "file:" URI of a file path, with the characters that
// URIs reserve percent-encoded, and the given query (without "?").
func sqliteURI(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("file:")
	for i := 0; i < len(abs); i++ {
		switch c := abs[i]; c {
		case '%', '?', '#':
			fmt.Fprintf(&b, "%%%02X", c)
		default:
			b.WriteByte(c)
		}
	}
	if query != "" {
		b.WriteByte('?')
		b.WriteString(query)
	}
	return b.String(), nil
}

// openIndex opens an index.sqlite read-only, as energon's loader does
// (immutable: no lock, no journal looked for).
func openIndex(path string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	uri, err := sqliteURI(path, "mode=ro&immutable=1")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// readIndex reads the rows of index.sqlite into shards (their names set,
// in tar_file_id order): samples by sample_index, parts in rowid order.
func readIndex(path string, shards []ShardSamples) error {
	db, err := openIndex(path)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx := context.Background()
	for _, t := range indexTables {
		var n int
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", t.Name).Scan(&n)
		if err != nil {
			return fmt.Errorf("%w: %s is no SQLite database: %v", ErrFormat, path, err)
		}
		if n != 1 {
			return fmt.Errorf("%w: %s has no table %s", ErrFormat, path, t.Name)
		}
	}
	shard := func(id int64) (*ShardSamples, error) {
		if id < 0 || id >= int64(len(shards)) {
			return nil, fmt.Errorf("%w: %s: tar_file_id %d, but the dataset has %d shards", ErrFormat, path, id, len(shards))
		}
		return &shards[id], nil
	}
	seen := make([][]bool, len(shards))
	err = query(ctx, db, tableSamples, func(id int64, key string, idx, off, size int64) error {
		s, err := shard(id)
		if err != nil {
			return err
		}
		if idx < 0 || idx >= int64(len(s.Samples)) || seen[id][idx] {
			return fmt.Errorf("%w: %s: sample_index %d of %s, which has %d samples in .info", ErrFormat, path, idx, s.Name, len(s.Samples))
		}
		seen[id][idx] = true
		s.Samples[idx] = Sample{Key: key, Offset: off, Size: size}
		return nil
	}, func() {
		for i := range shards {
			seen[i] = make([]bool, len(shards[i].Samples))
		}
	})
	if err != nil {
		return err
	}
	for i, s := range shards {
		for j, ok := range seen[i] {
			if !ok {
				return fmt.Errorf("%w: %s: no sample_index %d of %s, which has %d samples in .info", ErrFormat, path, j, s.Name, len(s.Samples))
			}
		}
		if n := len(s.Samples); n > 0 {
			shards[i].End = s.Samples[n-1].Offset + s.Samples[n-1].Size
		}
	}
	return query(ctx, db, tableSampleParts, func(id int64, name string, idx, off, size int64) error {
		s, err := shard(id)
		if err != nil {
			return err
		}
		if idx < 0 || idx >= int64(len(s.Samples)) {
			return fmt.Errorf("%w: %s: a part of sample_index %d of %s, which has %d samples", ErrFormat, path, idx, s.Name, len(s.Samples))
		}
		s.Parts = append(s.Parts, Part{Sample: int(idx), Name: name, Offset: off, Size: size})
		return nil
	}, func() {})
}

// query reads a table of index.sqlite in rowid order, each row as its
// tar_file_id, its text, its index and two numbers; a NULL or a value of
// another type is ErrFormat.
func query(ctx context.Context, db *sql.DB, table string, fn func(id int64, text string, idx, a, b int64) error, start func()) error {
	q := "SELECT tar_file_id, sample_key, sample_index, byte_offset, byte_size FROM samples ORDER BY rowid"
	if table == tableSampleParts {
		q = "SELECT tar_file_id, part_name, sample_index, content_byte_offset, content_byte_size FROM sample_parts ORDER BY rowid"
	}
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return fmt.Errorf("%w: table %s: %v", ErrFormat, table, err)
	}
	defer rows.Close()
	start()
	for rows.Next() {
		var v [5]any
		if err := rows.Scan(&v[0], &v[1], &v[2], &v[3], &v[4]); err != nil {
			return fmt.Errorf("%w: table %s: %v", ErrFormat, table, err)
		}
		id, ok0 := v[0].(int64)
		text, ok1 := v[1].(string)
		idx, ok2 := v[2].(int64)
		a, ok3 := v[3].(int64)
		b, ok4 := v[4].(int64)
		if !ok0 || !ok1 || !ok2 || !ok3 || !ok4 {
			return fmt.Errorf("%w: table %s: a row of types %T, %T, %T, %T, %T", ErrFormat, table, v[0], v[1], v[2], v[3], v[4])
		}
		if err := fn(id, text, idx, a, b); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: table %s: %v", ErrFormat, table, err)
	}
	return nil
}
