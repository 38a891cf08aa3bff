package barecat

import (
	"database/sql"
	"errors"

	"github.com/itarconv/itarconv/internal/bloom"
)

// sqliteConstraint is SQLITE_CONSTRAINT, the primary code of a failed
// UNIQUE or NOT NULL constraint.
const sqliteConstraint = 19

// dropFilter drops the filter of the files' paths, once it would pass its
// share of WriterOptions.Memory: from then on SQLite's unique index on
// path finds a repeated path as the rows go in (repeated), and Close the
// paths that are both a file and a directory (checkConflicts), so that
// memory does not grow with the number of files.
func (w *Writer) dropFilter() {
	w.unfiltered = true
	w.paths = bloom.Filter{}
	if w.tree != nil {
		w.tree.onNew = nil
	}
}

// repeated returns the ErrDuplicate of the first of rows whose path a row
// before it has, when that is why inserting them failed (err, a
// constraint; insertLoop's). Nothing of rows is in the table then but,
// perhaps, the rows before the repeated one: the rows before the batch
// are those up to rowid w.inserted.
func (w *Writer) repeated(rows []File, err error) error {
	var c interface{ Code() int }
	if !errors.As(err, &c) || c.Code()&0xff != sqliteConstraint {
		return nil
	}
	seen := make(map[string]bool, len(rows))
	for i := range rows {
		f := &rows[i]
		if f.Shard == dirRow {
			continue
		}
		dup := seen[f.Path]
		if !dup {
			var n int
			err := w.conn.QueryRowContext(w.ctx, `SELECT count(*) FROM files WHERE path = ? AND rowid <= ?`, f.Path, w.inserted).Scan(&n)
			if err != nil {
				return w.sqlErr("reading files", err)
			}
			dup = n > 0
		}
		if dup {
			return newErr(w.path, f.Path, ErrDuplicate, "added twice (found as its row went in)")
		}
		seen[f.Path] = true
	}
	return nil
}

// checkConflicts finds a path that is both a file and a directory: what
// the filter and the tree check as paths arrive, once they no longer
// can (the tree spilled, or the filter dropped).
func (w *Writer) checkConflicts() error {
	var clash string
	err := w.conn.QueryRowContext(w.ctx, `SELECT d.path FROM main.dirs AS d
		WHERE EXISTS (SELECT 1 FROM main.files AS f WHERE f.path = d.path) ORDER BY d.path LIMIT 1`).Scan(&clash)
	if err == nil {
		return newErr(w.path, clash, ErrConflict, "a file, and a directory of other files")
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return w.sqlErr("checking the directories", err)
	}
	return nil
}
