package ratarmount

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the database/sql driver "sqlite"
)

// WriteTo writes the complete index to a new SQLite database at dbPath,
// with archive the os.Stat of the archive (for metadata tarstats).
// dbPath must not exist or be empty: the caller passes a temporary name
// beside the final one and renames the file into place when WriteTo
// returns nil. The database is written in one transaction without a
// rollback journal (journal_mode=OFF: a failed write is thrown away, not
// rolled back), so no -journal or -wal file is left beside it, and synced
// before WriteTo returns. On error, dbPath is removed.
//
// An archive without members is ErrEmpty, and the error of an earlier Add
// is returned as is.
func (b *Builder) WriteTo(dbPath string, archive os.FileInfo) (err error) {
	if b.err != nil {
		return b.err
	}
	if len(b.rows) == 0 {
		return fmt.Errorf("%s: %w", dbPath, ErrEmpty)
	}
	if fi, err := os.Stat(dbPath); err == nil && fi.Size() > 0 {
		return fmt.Errorf("writing ratarmount index %s: the file exists and is not empty", dbPath)
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("writing ratarmount index: %w", err)
	}
	defer func() {
		if err != nil {
			os.Remove(dbPath)
			err = fmt.Errorf("writing ratarmount index %s: %w", dbPath, err)
		}
	}()
	if err := writeSQL(dbPath, func(fn func(string, []any) error) error { return b.tables(archive, fn) }); err != nil {
		return err
	}
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		if _, err := os.Lstat(dbPath + suffix); err == nil {
			return fmt.Errorf("SQLite left %s behind", dbPath+suffix)
		}
	}
	f, err := os.Open(dbPath)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// writeSQL creates the database at path with Schema and the rows that
// rows hands its function, in one transaction with a prepared INSERT per
// table.
func writeSQL(path string, rows func(fn func(table string, row []any) error) error) (err error) {
	uri, err := sqliteURI(path, "")
	if err != nil {
		return err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("closing the database: %w", cerr)
		}
	}()
	db.SetMaxOpenConns(1)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("opening the database: %w", err)
	}
	defer conn.Close()
	// The page size and encoding ratarmount's indexes have (SQLite's
	// defaults, set here so as not to depend on them); no journal, no
	// fsync per statement, no locking per transaction: the file is a
	// temporary one that nobody else opens, thrown away on error and
	// synced once complete. Nothing of this is stored in the file but the
	// page size and encoding: readers open it in SQLite's default
	// rollback-journal mode.
	for _, p := range []string{
		"PRAGMA page_size = 4096",
		"PRAGMA encoding = 'UTF-8'",
		"PRAGMA journal_mode = OFF",
		"PRAGMA synchronous = OFF",
		"PRAGMA locking_mode = EXCLUSIVE",
	} {
		if _, err := conn.ExecContext(ctx, p); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("BEGIN: %w", err)
	}
	defer func() {
		if err != nil {
			tx.Rollback()
		}
	}()
	for _, e := range Schema {
		if _, err := tx.ExecContext(ctx, e.SQL); err != nil {
			return fmt.Errorf("creating %s %s: %w", e.Type, e.Name, err)
		}
	}
	stmts := make(map[string]*sql.Stmt)
	defer func() {
		for _, s := range stmts {
			s.Close()
		}
	}()
	err = rows(func(table string, row []any) error {
		st := stmts[table]
		if st == nil {
			cols := columns[table]
			q := fmt.Sprintf(`INSERT INTO %q VALUES (?%s)`, table, strings.Repeat(", ?", len(cols)-1))
			var perr error
			if st, perr = tx.PrepareContext(ctx, q); perr != nil {
				return fmt.Errorf("preparing the insert into %s: %w", table, perr)
			}
			stmts[table] = st
		}
		if _, err := st.ExecContext(ctx, row...); err != nil {
			return fmt.Errorf("inserting into %s: %w", table, err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("COMMIT: %w", err)
	}
	return nil
}

// sqliteURI is a file: URI for path, with the characters that a URI
// path cannot hold as they are escaped.
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
