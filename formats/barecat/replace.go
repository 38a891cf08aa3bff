package barecat

import (
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/sqliteuri"
)

// replaceable tells whether what is at path and its shard names may be
// replaced by a new archive (Overwrite): the index, if there, is a
// regular file holding an SQLite database with Barecat's files and dirs
// tables, and every path-shard-NNNNN there is a regular file or a link
// (barecat links shards to the tars they wrap). Anything else (a file of
// that name that is no index, a directory) is ErrNotArchive, naming it:
// the commit would delete it.
func replaceable(path string) error {
	refuse := func(p, format string, args ...any) error {
		return &Error{Path: p, Err: ErrNotArchive, Detail: fmt.Sprintf(format, args...) + " (--force replaces a Barecat archive, nothing else)"}
	}
	if _, err := os.Lstat(path); err == nil {
		if err := isIndex(path); err != nil {
			return refuse(path, "%v", err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for n := 0; ; n++ {
		p := ShardPath(path, n)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if !st.Mode().IsRegular() && st.Mode().Type() != fs.ModeSymlink {
			return refuse(p, "not a shard: %v", st.Mode().Type())
		}
	}
}

// isIndex checks that path is a Barecat index: an SQLite database (read,
// not a FIFO waited on) with a files and a dirs table.
func isIndex(path string) error {
	f, err := pathguard.Open(path)
	if err != nil {
		return err
	}
	var magic [len(sqliteMagic)]byte
	_, err = io.ReadFull(f, magic[:])
	f.Close()
	if err != nil || string(magic[:]) != sqliteMagic {
		return errors.New("not an SQLite database")
	}
	uri, err := sqliteuri.File(path, "mode=ro")
	if err != nil {
		return err
	}
	db, err := sql.Open(driverName, uri)
	if err != nil {
		return err
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN ('files', 'dirs')`).Scan(&n); err != nil {
		return fmt.Errorf("reading its schema: %v", err)
	}
	if n != 2 {
		return errors.New("an SQLite database without Barecat's files and dirs tables")
	}
	return nil
}
