package barecat

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
)

// Report is what Verify found.
type Report struct {
	Files     int64 // rows of the files table
	Dirs      int64 // rows of the dirs table
	Checked   int64 // files whose bytes were read and matched their crc32c
	BytesRead int64
	// Problems lists each problem found, as an *Error naming the file on
	// disk, the member and the sentinel (ErrCRC, ErrBounds,
	// ErrMissingShard, ErrCorrupt, ErrStats, ErrConflict,
	// ErrInvalidPath).
	Problems []*Error
}

// OK reports whether Verify found no problem.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// maxProblems bounds the report of a badly broken archive.
const maxProblems = 10000

// maxPathBytes bounds the paths Verify reads. No file system takes a
// longer one, and a longer one in a hostile index would be copied by
// every scan, sort and check of it (one 50 MiB path cost 1 GiB of memory,
// most of it SQLite's integrity check): rows past it are reported, by
// rowid and length, and left out of the other checks.
const maxPathBytes = 1 << 20

// shortPath selects the rows whose path Verify reads, when some are
// longer than maxPathBytes (octet_length reads no more of the value).
var shortPath = fmt.Sprintf("octet_length(path) <= %d", maxPathBytes)

// longPaths reports the files and dirs rows whose path is longer than
// maxPathBytes and, for the files among them whose directory is not long
// itself, counts their sizes in tree (if not nil), as the directories'
// counters do. Their directory is found from the path's first
// maxPathBytes characters when the rest holds no "/": the parent column
// would be computed from the whole path, at a cost of many copies.
func (a *Archive) longPaths(ctx context.Context, add func(*Error), tree *dirTree) (files, dirs int64, err error) {
	for _, table := range []string{"files", "dirs"} {
		q := fmt.Sprintf(`SELECT rowid, octet_length(path) FROM %s WHERE NOT %s`, table, shortPath)
		if table == "files" {
			q = fmt.Sprintf(`SELECT rowid, octet_length(path),
				CASE WHEN instr(substr(path, %[1]d + 1), '/') = 0 THEN substr(path, 1, %[1]d) END, size
				FROM files WHERE NOT %[2]s`, maxPathBytes, shortPath)
		}
		rows, err := a.db.QueryContext(ctx, q)
		if err != nil {
			return 0, 0, a.queryErr(ctx, table, err)
		}
		for rows.Next() {
			var rowid, length int64
			var parent sql.NullString // the path's head, holding its last "/"
			var size sql.NullInt64
			dest := []any{&rowid, &length}
			if table == "files" {
				dest = append(dest, &parent, &size)
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return 0, 0, a.queryErr(ctx, table, err)
			}
			if table == "files" {
				files++
			} else {
				dirs++
			}
			add(newErr(a.indexPath, "", ErrInvalidPath, "%s row %d: a path of %d bytes, longer than any file system takes (%d); not read", table, rowid, length, maxPathBytes))
			if p := sqlParent(parent.String); tree != nil && parent.Valid && len(p) <= maxPathBytes {
				if err := tree.addFile(p, size.Int64); err != nil {
					rows.Close()
					return 0, 0, err
				}
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return 0, 0, a.queryErr(ctx, table, err)
		}
	}
	return files, dirs, nil
}

// Verify checks the whole archive, as barecat's verify does and more:
// every file row is well formed and inside its shard, every file with a
// crc32c is read and matches it, every directory's four counters equal
// what its files give (recomputed from the files table the way barecat's
// integrity check does), every file's directory and every directory's
// parent has a row, no path is both a file and a directory, paths are
// normalized, modes, uids and gids are ones a file system has (CheckFile), use_triggers is on, and SQLite's own integrity check
// passes. A path longer than maxPathBytes is a problem of its own, and
// its row is left out of the other checks (but for its size, counted in
// its directory). Files are read in shard order. The error is for what stops the
// check (an unreadable index, ctx); what is wrong with the archive is in
// the Report.
func (a *Archive) Verify(ctx context.Context) (*Report, error) {
	rep := &Report{}
	add := func(e *Error) {
		if len(rep.Problems) < maxProblems {
			rep.Problems = append(rep.Problems, e)
		}
	}
	// Many directories are checked by a walk of two sorted queries
	// (verifyDirsSorted), not in memory.
	var numDirs int64
	if err := a.db.QueryRowContext(ctx, `SELECT count(*) FROM dirs`).Scan(&numDirs); err != nil {
		return nil, a.queryErr(ctx, "dirs", err)
	}
	var tree *dirTree // the files' directories, counted in memory
	if numDirs <= int64(maxTreeDirs) {
		tree = newDirTree(sqlParent)
	}
	longFiles, longDirs, err := a.longPaths(ctx, add, tree)
	if err != nil {
		return nil, err
	}
	long := longFiles + longDirs
	rep.Files += longFiles
	if err := a.verifyFiles(ctx, rep, add, tree, long > 0); err != nil {
		return nil, err
	}
	if tree == nil {
		err = a.verifyDirsSorted(ctx, rep, add, long > 0)
	} else {
		err = a.verifyDirsTree(ctx, rep, add, tree, long > 0)
	}
	if err != nil {
		return nil, err
	}
	rep.Dirs += longDirs
	if err := a.verifyClashes(ctx, add, long > 0); err != nil {
		return nil, err
	}
	a.verifyTriggers(add)
	if long > 0 {
		// It would read every long path several times over.
		add(newErr(a.indexPath, "", ErrCorrupt, "SQLite integrity check not run: %d rows hold paths longer than %d bytes", long, maxPathBytes))
	} else if err := a.queryStrings(ctx, `PRAGMA integrity_check`, func(msg string) {
		if msg != "ok" {
			add(newErr(a.indexPath, "", ErrCorrupt, "SQLite integrity check: %s", msg))
		}
	}); err != nil {
		return nil, err
	}
	if len(rep.Problems) == maxProblems {
		rep.Problems = append(rep.Problems, newErr(a.indexPath, "", ErrCorrupt,
			"%s", fmt.Sprintf("more than %d problems; the rest are not listed", maxProblems)))
	}
	return rep, nil
}

// verifyFiles checks every file row whose path is not long, in shard
// order so that the shards are read front to back: its path, its fields
// (CheckFile), its place in its shard and, when it has a crc32c, its
// bytes. It counts each file's size in tree (if not nil) for
// verifyDirsTree.
func (a *Archive) verifyFiles(ctx context.Context, rep *Report, add func(*Error), tree *dirTree, long bool) error {
	q := `SELECT ` + fileColumns + ` FROM files ORDER BY shard, offset`
	if long {
		q = `SELECT ` + fileColumns + ` FROM files WHERE ` + shortPath + ` ORDER BY shard, offset`
	}
	return a.queryFiles(ctx, q, nil, func(f File, bad *Error) error {
		rep.Files++
		if bad != nil {
			add(bad)
			if bad.Name == "" {
				return nil // not even the path could be read
			}
		}
		a.verifyFileFields(f, add)
		if tree != nil {
			if err := tree.addFile(sqlParent(f.Path), f.Size); err != nil {
				return err
			}
		}
		if bad != nil {
			return nil
		}
		if e := a.check(f); e != nil {
			add(e)
			return nil
		}
		if !f.HasCRC {
			return nil
		}
		return a.verifyBytes(ctx, f, rep, add)
	})
}

// verifyFileFields reports a path that is not as NormalizePath makes it
// (barecat would not find the file by it) and fields no file system has.
func (a *Archive) verifyFileFields(f File, add func(*Error)) {
	if p, err := NormalizePath(f.Path); err != nil || p != f.Path || p == "" {
		why := "not normalized"
		var e *Error
		if errors.As(err, &e) {
			why = e.Detail
		} else if p == "" {
			why = "empty"
		}
		add(newErr(a.indexPath, f.Path, ErrInvalidPath, "%s", why))
	}
	if err := a.CheckFile(f); err != nil {
		add(a.asError(err))
	}
}

// verifyBytes reads f and checks its crc32c: a mismatch or a short shard
// is a problem of the report; a failure to read, or ctx, stops Verify.
func (a *Archive) verifyBytes(ctx context.Context, f File, rep *Report, add func(*Error)) error {
	r, err := a.Open(f)
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, r)
	rep.BytesRead += n
	var e *Error
	if errors.As(err, &e) {
		add(e)
		return nil
	} else if err != nil {
		return err
	}
	rep.Checked++
	return ctx.Err()
}

// verifyClashes reports each path that is both a file and a directory,
// leaving long paths out.
func (a *Archive) verifyClashes(ctx context.Context, add func(*Error), long bool) error {
	clashes := clashQuery
	if long {
		clashes = strings.Replace(clashQuery, "WHERE EXISTS", "WHERE octet_length(d.path) <= "+fmt.Sprint(maxPathBytes)+" AND EXISTS", 1)
	}
	return a.queryStrings(ctx, clashes, func(p string) {
		add(newErr(a.indexPath, p, ErrConflict, "a file and a directory"))
	})
}

// verifyTriggers reports an index whose use_triggers is not 1: barecat's
// triggers then leave the directory statistics as they are when files
// are added or removed.
func (a *Archive) verifyTriggers(add func(*Error)) {
	switch v, ok, err := a.configInt("use_triggers"); {
	case err != nil:
		add(a.asError(err))
	case !ok:
		add(newErr(a.indexPath, "", ErrCorrupt, "no use_triggers row in config: barecat's triggers will not keep the directory statistics"))
	case v != 1:
		add(newErr(a.indexPath, "", ErrCorrupt, "use_triggers is %d: barecat's triggers will not keep the directory statistics", v))
	}
}

// verifyDirsTree checks the directories against the tree of the files'
// directories, in memory (directories are few).
func (a *Archive) verifyDirsTree(ctx context.Context, rep *Report, add func(*Error), tree *dirTree, long bool) error {
	var dirs []Dir
	subdirs := map[string]int64{}
	tail := `WHERE 1 ORDER BY path`
	if long {
		tail = `WHERE ` + shortPath + ` ORDER BY path`
	}
	err := a.queryDirs(ctx, tail, func(d Dir) error {
		dirs = append(dirs, d)
		if err := a.CheckDir(d); err != nil {
			add(a.asError(err))
		}
		if d.Path != "" {
			subdirs[sqlParent(d.Path)]++
		}
		return nil
	})
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			add(e)
		} else {
			return err
		}
	}
	rep.Dirs = int64(len(dirs))
	nodes := tree.finish()
	computed := make(map[string]*dirNode, len(nodes))
	for _, n := range nodes {
		computed[n.Path] = n
	}
	haveDir := map[string]bool{}
	for _, d := range dirs {
		haveDir[d.Path] = true
	}
	for _, d := range dirs {
		var want Dir
		if n := computed[d.Path]; n != nil {
			want = n.Dir
		}
		want.NumSubdirs = subdirs[d.Path]
		if d.NumSubdirs != want.NumSubdirs || d.NumFiles != want.NumFiles ||
			d.NumFilesTree != want.NumFilesTree || d.SizeTree != want.SizeTree {
			add(newErr(a.indexPath, d.Path, ErrStats,
				"directory has num_subdirs %d, num_files %d, num_files_tree %d, size_tree %d; its files give %d, %d, %d, %d",
				d.NumSubdirs, d.NumFiles, d.NumFilesTree, d.SizeTree,
				want.NumSubdirs, want.NumFiles, want.NumFilesTree, want.SizeTree))
		}
		if d.Path != "" && !haveDir[sqlParent(d.Path)] {
			add(newErr(a.indexPath, d.Path, ErrCorrupt, "the parent directory %s has no row", human.Name(sqlParent(d.Path))))
		}
	}
	for _, n := range nodes {
		if !haveDir[n.Path] && n.NumFiles > 0 {
			add(newErr(a.indexPath, n.Path, ErrCorrupt, "directory of %d files has no row", n.NumFiles))
		}
	}
	return nil
}

// queryStrings calls fn with the first column of every row of q.
func (a *Archive) queryStrings(ctx context.Context, q string, fn func(string)) error {
	rows, err := a.db.QueryContext(ctx, q)
	if err != nil {
		return a.queryErr(ctx, q, err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return a.queryErr(ctx, q, err)
		}
		fn(s)
	}
	if err := rows.Err(); err != nil {
		return a.queryErr(ctx, q, err)
	}
	return nil
}

// asError makes a check's failure a problem of the report: checks fail
// with *Error; anything else becomes a corrupt-archive problem rather than
// being dropped.
func (a *Archive) asError(err error) *Error {
	var e *Error
	if !errors.As(err, &e) {
		e = newErr(a.indexPath, "", ErrCorrupt, "%v", err)
	}
	return e
}
