package energon

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	_ "modernc.org/sqlite" // database/sql driver "sqlite", to read the file

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/internal/sqliteuri"
)

// writeIndex writes index.sqlite at path from the rows rows gives (see
// tables): under a temporary name in the same directory, synced, given
// its mode, then renamed into place. A failure removes the temporary file
// and leaves any index.sqlite there as it was.
//
// The file is written by sqlitefile, not through an SQL engine: energon's
// index is written from the same pass over the tar headers as our own,
// and inserting its rows one at a time through SQLite's b-tree balancing
// cost a second per 100,000 samples of three parts, many times the pass
// itself. sqlitefile lays out the same tables and indexes directly (see
// loadIndex), and SQLite reads the file as it reads energon's own.
func writeIndex(path string, mode fs.FileMode, rows func(fn func(table int, row []sqlitefile.Value) error) error) (err error) {
	return writeIndexKeys(path, mode, 0, rows, nil, nil)
}

// writeIndexKeys is writeIndex taking, if keys is not nil, each table's
// rows again from keys for its indexes' keys (sqlitefile's KeysFrom), each
// index's in a pass of its own, side by side with the others'; sizes, if
// not nil, are about how many bytes each table's rows take, for the keys
// to be gathered beside the rows (sqlitefile's KeysEarly).
func writeIndexKeys(path string, mode fs.FileMode, memory int64, rows func(fn func(table int, row []sqlitefile.Value) error) error, keys func(table int, fn func(row []sqlitefile.Value) error) error, sizes []int64) (err error) {
	dir, base := filepath.Split(path)
	safefile.SweepLeftovers(dir)
	f, err := os.CreateTemp(dir, safefile.TempName(base))
	if err != nil {
		return fmt.Errorf("energon: creating %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := loadIndex(f, memory, rows, keys, sizes); err != nil {
		if errors.Is(err, sqlitefile.ErrUnique) {
			// WriteMeta refuses repeated keys before it writes; a
			// caller that did not is told the same.
			return fmt.Errorf("energon: writing %s: %w: %w", path, ErrDuplicateKey, err)
		}
		return fmt.Errorf("energon: writing %s: %w", path, err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
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

// loadIndex writes the database to f, an empty file: the tables, their
// rows, the indexes, as energon creates them (schema.go).
//
// sqlitefile writes what energon's SQLite writes, table for table: the
// same sqlite_master rows (but for rootpage, where each b-tree starts,
// which depends on the order the pages were written in and which SQLite
// only follows, finding tables and indexes by name), the same rows under
// the same rowids, the same settings in the header (page size 4096,
// UTF-8, schema format 4, user_version and application_id 0, no
// auto-vacuum, no free pages, a rollback journal, not WAL, the version
// number of energon's SQLite 3.40.1). The file change counter and the
// schema cookie differ: they count writes and schema changes, for
// SQLite's caches to notice the next ones, and say nothing of the content.
//
// sqlitefile needs the indexes declared before the first row (it gathers
// their keys as the rows come) and the automatic index of each UNIQUE
// constraint declared as such. It keeps the indexes' keys in memory until
// Close, which sorts them and writes the index b-trees: the sample key and
// some 20 bytes a sample, some 40 bytes a part, as much again while an
// index is sorted. WriteMeta has refused repeated keys already, so the
// UNIQUE index does not fail here.
func loadIndex(f *os.File, memory int64, rows func(fn func(table int, row []sqlitefile.Value) error) error, keys func(table int, fn func(row []sqlitefile.Value) error) error, sizes []int64) error {
	w, err := sqlitefile.New(f, sqlitefile.Options{PageSize: 4096, Version: sqliteVersion, Memory: memory})
	if err != nil {
		return err
	}
	tabs := make([]*sqlitefile.Table, len(indexTables))
	for i, t := range indexTables {
		tabs[i] = w.Table(t.Name, t.Create)
		if keys != nil {
			tabs[i].KeysFrom(func(yield func([]sqlitefile.Value) error) error { return keys(i, yield) })
			if i < len(sizes) {
				tabs[i].KeysEarly(sizes[i])
			}
		}
		for _, c := range t.Unique {
			if err := tabs[i].AutoIndex(column(t, c)); err != nil {
				return err
			}
		}
	}
	for _, x := range indexIndexes {
		t := slices.IndexFunc(indexTables, func(t indexTable) bool { return t.Name == x.Table })
		if t < 0 {
			return fmt.Errorf("index %s: no table %s", x.Name, x.Table)
		}
		cols := make([]int, len(x.Columns))
		for i, c := range x.Columns {
			cols[i] = column(indexTables[t], c)
		}
		if err := w.Index(x.Name, x.Table, x.Create, cols, false); err != nil {
			return err
		}
	}
	err = rows(func(table int, row []sqlitefile.Value) error {
		return tabs[table].Append(row...)
	})
	if err != nil {
		return err
	}
	return w.Close()
}

// sqliteVersion is the SQLITE_VERSION_NUMBER of the SQLite that wrote the
// oracle's files (3.40.1), for the header field that names the last
// version to write the file. SQLite does not act on it; it is energon's,
// as the rest of the header.
const sqliteVersion = 3040001

// column is the place of column name in t; a name that is not t's is a
// bug in schema.go, which -1 makes sqlitefile report.
func column(t indexTable, name string) int {
	return slices.Index(t.Columns, name)
}

// openIndex opens an index.sqlite read-only, as energon's loader does
// (immutable: no lock, no journal looked for).
func openIndex(path string) (*sql.DB, error) {
	// SQLite would open a FIFO and wait for a writer.
	if _, err := pathguard.Regular(path); err != nil {
		return nil, err
	}
	uri, err := sqliteuri.File(path, "mode=ro&immutable=1")
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
// in tar_file_id order): samples by sample_index, parts in rowid order. It
// stops when ctx is cancelled.
func readIndex(ctx context.Context, path string, shards []ShardSamples) error {
	db, err := openIndex(path)
	if err != nil {
		return err
	}
	defer db.Close()
	for _, t := range indexTables {
		var n int
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", t.Name).Scan(&n)
		if ctx.Err() != nil {
			return ctx.Err() // not the file's fault
		}
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

// withContext wraps a row function so that the rows stop, with ctx's
// error, once ctx is cancelled (looked at every 4096 rows).
func withContext(ctx context.Context, fn func(table int, row []sqlitefile.Value) error) func(table int, row []sqlitefile.Value) error {
	n := 0
	return func(table int, row []sqlitefile.Value) error {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		return fn(table, row)
	}
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
	if ctx.Err() != nil {
		return ctx.Err()
	}
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
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%w: table %s: %v", ErrFormat, table, err)
	}
	return nil
}
