package barecat

import (
	"context"
	"database/sql/driver"
	"fmt"
	"hash/maphash"
	"os"

	"github.com/itarconv/itarconv/internal/safefile"
)

// The Writer counts directories in memory (dirTree) while they are few.
// Past maxTreeDirs it spills: the explicit directories' metadata goes to
// a scratch database beside the index, the tree is dropped, and Close
// computes the dirs table in SQL from the files table (a GROUP BY on
// parent, then every ancestor, then each directory's subtree as a range
// of the sorted per-directory counts). Memory then does not grow with the
// number of directories either; the checks that a path is not both a
// file and a directory move to Close.
var maxTreeDirs = 1 << 16

// dirRow in File.Shard marks a pending row that is a directory's
// metadata for the scratch table, not a file.
const dirRow = -1

// scratchName is the scratch database's name on the index's connection.
const scratchName = "itarconv_scratch"

// count adds a file of size bytes to the directory (nothing once spilled).
func (d *dirNode) count(size int64) {
	if d != nil {
		d.NumFiles++
		d.ownSize += size
	}
}

// dirOf returns the directory at path from the tree, creating it and its
// ancestors, or nil once the tree is spilled.
func (w *Writer) dirOf(path string) (*dirNode, error) {
	if w.spilled {
		return nil, nil
	}
	d, err := w.tree.dir(path)
	if err != nil {
		return nil, err
	}
	if len(w.tree.nodes) > maxTreeDirs {
		if err := w.spill(); err != nil {
			return nil, w.fail(err)
		}
		return nil, nil
	}
	return d, nil
}

// openScratch attaches the scratch database (before the load's
// transaction begins: SQLite attaches outside transactions only).
func (w *Writer) openScratch(ctx context.Context) error {
	f, err := os.CreateTemp(w.dir, safefile.TempName(w.base+"-dirs"))
	if err != nil {
		return err
	}
	w.tmpScratch = f.Name()
	f.Close()
	if _, err := w.conn.ExecContext(ctx, `ATTACH DATABASE ? AS `+scratchName, w.tmpScratch); err != nil {
		return w.sqlErr("attaching the scratch database", err)
	}
	for _, p := range []string{"journal_mode = OFF", "synchronous = OFF", "locking_mode = EXCLUSIVE", "cache_size = -16384"} {
		if _, err := w.conn.ExecContext(ctx, "PRAGMA "+scratchName+"."+p); err != nil {
			return w.sqlErr(p, err)
		}
	}
	return nil
}

// spill moves the explicit directories out of the tree and drops it.
func (w *Writer) spill() error {
	if err := w.submit(); err != nil {
		return err
	}
	if err := w.sync(); err != nil {
		return err
	}
	if _, err := w.exec(`CREATE TABLE ` + scratchName + `.dirmeta (path TEXT PRIMARY KEY, mode INTEGER, uid INTEGER, gid INTEGER, mtime_ns INTEGER) WITHOUT ROWID`); err != nil {
		return w.sqlErr("creating the scratch table", err)
	}
	err := w.conn.Raw(func(dc any) error {
		var err error
		w.insDir, err = dc.(driver.ConnPrepareContext).PrepareContext(w.ctx,
			`INSERT INTO `+scratchName+`.dirmeta (path, mode, uid, gid, mtime_ns) VALUES (?, ?, ?, ?, ?)`)
		return err
	})
	if err != nil {
		return w.sqlErr("preparing", err)
	}
	var rows []File
	for p, n := range w.tree.nodes {
		if !n.explicit {
			continue
		}
		if p == "" {
			w.rootMeta, w.rootExplicit = n.Dir, true
			continue
		}
		rows = append(rows, dirMetaRow(p, n.Dir))
		w.dirSeen.Add(maphash.String(w.seed, p))
	}
	w.tree, w.spilled = nil, true
	for len(rows) > 0 {
		n := min(len(rows), insertBatch)
		if err := w.insertRows(rows[:n]); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

func dirMetaRow(p string, d Dir) File {
	return File{Path: p, Shard: dirRow, Mode: d.Mode, HasMode: d.HasMode, UID: d.UID, HasUID: d.HasUID,
		GID: d.GID, HasGID: d.HasGID, MtimeNs: d.MtimeNs, HasMtime: d.HasMtime}
}

// addSpilledDir is AddDir once the tree is spilled.
func (w *Writer) addSpilledDir(p string, d Dir) error {
	if p == "" {
		if w.rootExplicit {
			return newErr(w.path, p, ErrDuplicate, "directory added twice")
		}
		w.rootMeta, w.rootExplicit = d, true
		return nil
	}
	h := maphash.String(w.seed, p)
	if w.dirSeen.MayContain(h) {
		dup := false
		for i := range w.pending {
			if r := &w.pending[i]; r.Shard == dirRow && r.Path == p {
				dup = true
			}
		}
		if !dup {
			if err := w.sync(); err != nil {
				return err
			}
			var one int
			err := w.conn.QueryRowContext(w.ctx, `SELECT count(*) FROM `+scratchName+`.dirmeta WHERE path = ?`, p).Scan(&one)
			if err != nil {
				return w.fail(w.sqlErr("reading directories", err))
			}
			dup = one > 0
		}
		if dup {
			return newErr(w.path, p, ErrDuplicate, "directory added twice")
		}
	}
	w.dirSeen.Add(h)
	w.dirRows++
	w.pending = append(w.pending, dirMetaRow(p, d))
	if len(w.pending) == insertBatch {
		return w.submit()
	}
	return nil
}

// finishDirs writes the dirs table: from the tree, or, once spilled, in SQL.
func (w *Writer) finishDirs() error {
	if !w.spilled {
		root := w.tree.nodes[""]
		if !root.explicit {
			d := w.rootMeta
			root.Mode, root.UID, root.GID, root.MtimeNs = d.Mode, d.UID, d.GID, d.MtimeNs
			root.HasMode, root.HasUID, root.HasGID, root.HasMtime = d.HasMode, d.HasUID, d.HasGID, d.HasMtime
		}
		if err := w.insertDirs(w.tree.finish()); err != nil || !w.unfiltered {
			return err
		}
		return w.checkConflicts()
	}
	s := scratchName
	// A directory's subtree is the range [path/, path0) of the sorted
	// per-directory counts ('0' follows '/'), read through an index.
	steps := []string{
		// Sorts and the scratch tables go to files, and the page cache
		// (which also bounds a sort's memory) shrinks: these tables are
		// as large as the directories are many.
		`PRAGMA temp_store = FILE`,
		`PRAGMA main.cache_size = -16384`,
		`CREATE TABLE ` + s + `.dirstat AS SELECT parent AS path, count(*) AS n, sum(size) AS s FROM main.files GROUP BY parent`,
		`CREATE UNIQUE INDEX ` + s + `.dirstat_path ON dirstat (path)`,
		`CREATE TABLE ` + s + `.anc AS WITH RECURSIVE a(path) AS (
			SELECT path FROM (SELECT '' AS path UNION SELECT path FROM ` + s + `.dirstat UNION SELECT path FROM ` + s + `.dirmeta)
			UNION SELECT ` + loadParent + `(path) FROM a WHERE path <> '')
		 SELECT path, CASE WHEN path = '' THEN NULL ELSE ` + loadParent + `(path) END AS par FROM a`,
		`CREATE INDEX ` + s + `.anc_par ON anc (par)`,
		`INSERT INTO main.dirs (path, num_subdirs, num_files, num_files_tree, size_tree, mode, uid, gid, mtime_ns)
		 SELECT a.path,
			(SELECT count(*) FROM ` + s + `.anc AS c WHERE c.par = a.path),
			coalesce(st.n, 0),
			CASE WHEN a.path = '' THEN (SELECT coalesce(sum(n), 0) FROM ` + s + `.dirstat)
				ELSE coalesce(st.n, 0) + (SELECT coalesce(sum(x.n), 0) FROM ` + s + `.dirstat AS x WHERE x.path >= a.path || '/' AND x.path < a.path || '0') END,
			CASE WHEN a.path = '' THEN (SELECT coalesce(sum(s), 0) FROM ` + s + `.dirstat)
				ELSE coalesce(st.s, 0) + (SELECT coalesce(sum(x.s), 0) FROM ` + s + `.dirstat AS x WHERE x.path >= a.path || '/' AND x.path < a.path || '0') END,
			m.mode, m.uid, m.gid, m.mtime_ns
		 FROM ` + s + `.anc AS a LEFT JOIN ` + s + `.dirstat AS st ON st.path = a.path LEFT JOIN ` + s + `.dirmeta AS m ON m.path = a.path
		 ORDER BY a.path`,
	}
	for _, q := range steps {
		if _, err := w.exec(q); err != nil {
			return w.sqlErr("computing the directories", err)
		}
	}
	d := w.rootMeta
	if _, err := w.exec(`UPDATE main.dirs SET mode = ?, uid = ?, gid = ?, mtime_ns = ? WHERE path = ''`,
		nullable(d.Mode, d.HasMode), nullable(d.UID, d.HasUID), nullable(d.GID, d.HasGID), nullable(d.MtimeNs, d.HasMtime)); err != nil {
		return w.sqlErr("writing the root directory", err)
	}
	// What the tree checked as paths arrived: no path is both.
	return w.checkConflicts()
}

// closeScratch detaches and removes the scratch database.
func (w *Writer) closeScratch() error {
	if w.tmpScratch == "" {
		return nil
	}
	var err error
	if w.conn != nil {
		if _, e := w.exec(`DETACH DATABASE ` + scratchName); e != nil {
			err = fmt.Errorf("detaching the scratch database: %w", e)
		}
	}
	os.Remove(w.tmpScratch)
	w.tmpScratch = ""
	return err
}
