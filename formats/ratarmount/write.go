package ratarmount

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/itarconv/itarconv/formats/sqlitefile"
)

// WriteTo writes the complete index to a new SQLite database at dbPath,
// with archive the os.Stat of the archive (for metadata tarstats).
// dbPath must not exist or be empty: the caller passes a temporary name
// beside the final one and renames the file into place when WriteTo
// returns nil. The database is written in one go by sqlitefile, straight
// to its pages (no SQL engine, no journal: nothing is left beside it),
// and synced before WriteTo returns. On error, dbPath is removed.
//
// Why not through SQLite: WriteTo runs in the same pass over the tar
// headers as the other loaders' indexes, and inserting row by row through
// an SQL engine (modernc.org/sqlite: some 5 µs a row with this schema, see
// BenchmarkIndex100k) would cost many times that pass. The file is the one SQLite would
// write for the same statements and rows: the same schema text, the same
// rows with the same storage classes, the same automatic indexes; only
// the page numbers differ, which nothing reads but SQLite itself.
//
// An archive without members is ErrEmpty, and the error of an earlier Add
// is returned as is.
func (b *Builder) WriteTo(dbPath string, archive os.FileInfo) (err error) {
	if b.err != nil {
		return b.err
	}
	if b.nrows == 0 {
		return fmt.Errorf("%s: %w", dbPath, ErrEmpty)
	}
	if fi, err := os.Stat(dbPath); err == nil && fi.Size() > 0 {
		return fmt.Errorf("writing ratarmount index %s: the file exists and is not empty", dbPath)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("writing ratarmount index: %w", err)
	}
	f, err := os.OpenFile(dbPath, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("writing ratarmount index: %w", err)
	}
	defer func() {
		if f != nil {
			f.Close()
		}
		if err != nil {
			os.Remove(dbPath)
			err = fmt.Errorf("writing ratarmount index %s: %w", dbPath, err)
		}
	}()
	if err := b.writeDB(f, archive); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	err = f.Close()
	f = nil
	return err
}

// WriteInto is WriteTo into f, an empty file the caller made (and syncs,
// closes and names: a safefile, committed with others), for the archive
// described by archive.
func (b *Builder) WriteInto(f *os.File, archive os.FileInfo) error {
	if b.err != nil {
		return b.err
	}
	if b.nrows == 0 {
		return ErrEmpty
	}
	if err := b.writeDB(f, archive); err != nil {
		return fmt.Errorf("writing ratarmount index: %w", err)
	}
	return nil
}

// fileRows gives the rows of table files again, for the keys of its
// index: their first three values (path, name, offsetheader), which the
// index reads, the rest of each row passed over undecoded.
func (b *Builder) fileRows(yield func(values []sqlitefile.Value) error) error {
	var (
		vals [3]sqlitefile.Value
		dir  string
	)
	err := b.eachChunk(func(chunk []byte) error {
		for p := chunk; len(p) > 0; {
			var name string
			var off int64
			p, dir, name, off = decodeKey(p, dir)
			vals = [3]sqlitefile.Value{sqlitefile.Text(dir), sqlitefile.Text(name), sqlitefile.Int(off)}
			if err := yield(vals[:]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return b.generatedRows(func(row []sqlitefile.Value) error { return yield(row[:3]) })
}

// writeDB writes the database to f, an empty file open for reading and
// writing: Schema's tables with the automatic indexes SQLite would give
// them (tableKeys), their rows from b.tables, then Schema's view and
// trigger.
func (b *Builder) writeDB(f *os.File, archive os.FileInfo) error {
	// sqlitefile's defaults are those of ratarmount's indexes, which are
	// SQLite's: pages of 4096 bytes, UTF-8, rollback journal.
	//
	// Keys that would pass KeysMemory are built again from the rows
	// (KeysFrom), streamed within it, rather than kept as each row is
	// appended.
	stream := b.KeysMemory > 0 && b.spillAt+int64(b.held)+8*int64(b.nrows) > int64(b.KeysMemory)
	w, err := sqlitefile.New(f, sqlitefile.Options{Memory: int64(b.KeysMemory)})
	if err != nil {
		return err
	}
	var (
		names  []string // tables in the order of Schema
		tables []*sqlitefile.Table
	)
	for _, e := range Schema {
		switch e.Type {
		case "view":
			if err := w.View(e.Name, e.SQL); err != nil {
				return err
			}
			continue
		case "trigger":
			if err := w.Trigger(e.Name, e.Table, e.SQL); err != nil {
				return err
			}
			continue
		}
		keys, ok := tableKeys[e.Name]
		if !ok {
			return fmt.Errorf("table %s: its keys are not declared", e.Name)
		}
		t := w.Table(e.Name, e.SQL)
		if e.Name == TableFiles && stream {
			t.KeysFrom(b.fileRows)
		}
		if keys.rowid >= 0 {
			t.RowidColumn(keys.rowid)
		}
		for _, cols := range keys.unique {
			if err := t.AutoIndex(cols...); err != nil {
				return err
			}
		}
		names = append(names, e.Name)
		tables = append(tables, t)
	}
	err = b.tables(archive, func(table string, row []sqlitefile.Value) error {
		// Rows come table by table, files first: the search is short.
		for i, n := range names {
			if n == table {
				if err := tables[i].Append(row...); err != nil {
					return fmt.Errorf("table %s: %w", table, err)
				}
				return nil
			}
		}
		return fmt.Errorf("rows for table %s, which Schema does not create", table)
	})
	if err != nil {
		return err
	}
	return w.Close()
}
