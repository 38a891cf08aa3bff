package barecat

import (
	"cmp"
	"errors"
	"fmt"
	"hash/maphash"
	"os"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/safefile"
)

// The index is written by formats/sqlitefile, which lays out SQLite's
// b-trees itself: the files table's rows go to its pages as they come,
// in the order the files were added (their rowids), the dirs table's at
// Close, in path order, and each index's keys are sorted and written at
// Close. The schema is barecat 0.3.1's, text for text (schema03), its
// triggers included, and use_triggers is 1: barecat can append to the
// archive. The generated column parent is stored in no row; its value
// (sqlParent, SQLite's own expression computed in Go) goes to the
// indexes over it.

// Shares of WriterOptions.Memory: the indexes' keys held before they are
// spilled, the log's entries.
const (
	keysShare = 64
	logShare  = 256
)

// indexColumns are the columns of each index of the schema, as the
// tables' CREATE statements number them (parent, a generated column, is
// column 1 of both).
var indexColumns = map[string][]int{
	"idx_files_path":         {0},
	"idx_dirs_path":          {0},
	"idx_files_parent":       {1},
	"idx_dirs_parent":        {1},
	"idx_files_shard_offset": {2, 3},
}

// openIndex creates the temporary index and declares the schema, and
// starts insertLoop.
func (w *Writer) openIndex() error {
	f, err := os.CreateTemp(w.dir, safefile.TempName(w.base))
	if err != nil {
		return err
	}
	w.tmpIndex, w.idxFile = f.Name(), f
	// The indexes' keys past a sixty-fourth of the budget go to sorted runs
	// in a temporary file beside the archive.
	sw, err := sqlitefile.New(f, sqlitefile.Options{Memory: max(w.opts.Memory/keysShare, 64<<10), Context: w.ctx, Concurrent: true, TempFile: func() (*os.File, error) {
		f, err := os.CreateTemp(w.dir, safefile.TempName(w.base+"-keys"))
		if err == nil {
			w.keysFile = f
		}
		return f, err
	}})
	if err != nil {
		return err
	}
	w.sw = sw
	for _, e := range schema03 {
		switch e.Type {
		case "table":
			t := sw.Table(e.Name, e.SQL)
			switch e.Name {
			case "files":
				w.filesT = t
			case "dirs":
				w.dirsT = t
			case "config":
				w.configT = t
			}
		case "index":
			cols, ok := indexColumns[e.Name]
			if !ok {
				return fmt.Errorf("barecat: index %s of the schema has no columns known", e.Name)
			}
			err = sw.Index(e.Name, e.Table, e.SQL, cols, strings.HasPrefix(e.SQL, "CREATE UNIQUE"))
		case "trigger":
			err = sw.Trigger(e.Name, e.Table, e.SQL)
		}
		if err != nil {
			return w.indexErr("declaring "+e.Name, err)
		}
	}
	if w.filesT == nil || w.dirsT == nil || w.configT == nil {
		return fmt.Errorf("barecat: the schema lacks a table")
	}
	for _, c := range []struct {
		key string
		v   int64
	}{{"use_triggers", 1}, {"shard_size_limit", w.limit}, {"schema_version_major", SchemaMajor}, {"schema_version_minor", SchemaMinor}} {
		if err := w.configT.Append(sqlitefile.Text(c.key), sqlitefile.Null(), sqlitefile.Int(c.v)); err != nil {
			return w.indexErr("writing config", err)
		}
	}
	w.log = newFileLog(w.dir, w.base, w.opts.Memory/logShare)
	w.logSeed = maphash.MakeSeed()
	w.pending = make([]File, 0, insertBatch)
	w.batches = make(chan []File, insertQueue)
	w.acks = make(chan struct{})
	w.spare = make(chan []File, insertQueue+2)
	w.loopDone = make(chan struct{})
	go w.insertLoop()
	return nil
}

// indexErr reports a failure writing the index.
func (w *Writer) indexErr(what string, err error) error {
	return fmt.Errorf("writing %s: index, %s: %w", w.path, what, err)
}

// insertLoop appends the batches it receives until the channel closes.
// After a failure it only drains. A nil batch is a request for an ack:
// every batch before it has been appended.
func (w *Writer) insertLoop() {
	defer close(w.loopDone)
	for b := range w.batches {
		if b == nil {
			w.acks <- struct{}{}
			continue
		}
		if w.loopErr == nil && !w.loopStop.Load() {
			if w.loopErr = w.insertRows(b); w.loopErr != nil {
				w.loopFail.Store(true)
			}
		}
		clear(b)
		select {
		case w.spare <- b[:0]:
		default:
		}
	}
}

// insertRows appends rows to the files table and the log (insertLoop's).
func (w *Writer) insertRows(rows []File) error {
	vals := w.vals[:0]
	for i := range rows {
		f := &rows[i]
		vals = append(vals[:0],
			sqlitefile.Text(f.Path), sqlitefile.Text(sqlParent(f.Path)),
			sqlitefile.Int(int64(f.Shard)), sqlitefile.Int(f.Offset), sqlitefile.Int(f.Size),
			nullInt(int64(f.CRC32C), f.HasCRC), nullInt(f.Mode, f.HasMode),
			nullInt(f.UID, f.HasUID), nullInt(f.GID, f.HasGID), nullInt(f.MtimeNs, f.HasMtime))
		if err := w.filesT.Append(vals...); err != nil {
			return w.indexErr("appending files", err)
		}
		err := w.log.add(logEntry{hash: maphash.String(w.logSeed, f.Path), offset: f.Offset, size: f.Size,
			shard: int32(f.Shard), crc: f.CRC32C, hasCRC: f.HasCRC})
		if err != nil {
			return err
		}
	}
	w.vals = vals[:0]
	return nil
}

func nullInt(v int64, ok bool) sqlitefile.Value {
	if !ok {
		return sqlitefile.Null()
	}
	return sqlitefile.Int(v)
}

// logged returns the file of path p from the log, once insertLoop has
// logged every file handed to it.
func (w *Writer) logged(p string) (File, bool, error) {
	if err := w.sync(); err != nil {
		return File{}, false, err
	}
	e, ok, err := w.log.find(maphash.String(w.logSeed, p))
	if err != nil || !ok {
		return File{}, false, err
	}
	return File{Path: p, Shard: int(e.shard), Offset: e.offset, Size: e.size, CRC32C: e.crc, HasCRC: e.hasCRC}, true, nil
}

// finishIndex writes the dirs table and what the index has left (its
// b-trees, sqlite_stat1, the schema), and syncs it.
func (w *Writer) finishIndex() error {
	if err := w.writeDirs(); err != nil {
		return err
	}
	w.log.close()
	// barecat closes its index with PRAGMA optimize, which leaves
	// sqlite_stat1 in every index with files: here, the figures of an
	// ANALYZE of files and dirs.
	if w.NumFiles() > 0 {
		if err := w.sw.Analyze("files", "dirs"); err != nil {
			return w.indexErr("sqlite_stat1", err)
		}
	}
	if err := w.ctx.Err(); err != nil {
		return err
	}
	err := w.sw.Close()
	w.sw = nil
	var ue *sqlitefile.UniqueError
	if errors.As(err, &ue) && ue.Table == "files" && len(ue.Values) == 1 {
		return newErr(w.path, ue.Values[0].Text(), ErrDuplicate, "added twice (found by the index)")
	}
	if err != nil {
		return w.indexErr("closing", err)
	}
	f := w.idxFile
	w.idxFile = nil
	if fsync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeDirs appends the dirs table's rows: from the tree, or, once
// spilled, from its records (writeSpilledDirs).
func (w *Writer) writeDirs() error {
	if w.dspill != nil {
		return w.writeSpilledDirs()
	}
	dirs := w.finishDirs()
	if w.unfiltered {
		// What the tree no longer asked as directories came: no path
		// is both a file and a directory.
		if err := w.checkConflicts(dirs); err != nil {
			return err
		}
	}
	vals := make([]sqlitefile.Value, 0, 10)
	for _, d := range dirs {
		parent := sqlitefile.Null()
		if d.Path != "" {
			parent = sqlitefile.Text(sqlParent(d.Path))
		}
		vals = append(vals[:0], sqlitefile.Text(d.Path), parent,
			sqlitefile.Int(d.NumSubdirs), sqlitefile.Int(d.NumFiles), sqlitefile.Int(d.NumFilesTree), sqlitefile.Int(d.SizeTree),
			nullInt(d.Mode, d.HasMode), nullInt(d.UID, d.HasUID), nullInt(d.GID, d.HasGID), nullInt(d.MtimeNs, d.HasMtime))
		if err := w.dirsT.Append(vals...); err != nil {
			return w.indexErr("appending dirs", err)
		}
	}
	return nil
}

// finishDirs gives the dirs table's rows, in path order: the root takes
// its metadata (rootMeta) unless AddDir gave it.
func (w *Writer) finishDirs() []*dirNode {
	root := w.tree.nodes[""]
	if !root.explicit {
		d := w.rootMeta
		root.Mode, root.UID, root.GID, root.MtimeNs = d.Mode, d.UID, d.GID, d.MtimeNs
		root.HasMode, root.HasUID, root.HasGID, root.HasMtime = d.HasMode, d.HasUID, d.HasGID, d.HasMtime
	}
	return w.tree.finish()
}

// checkConflicts finds a path that is both a file and a directory, among
// the directories made while no filter told files (unchecked): the log's
// hashes, read through once, are looked up among theirs.
func (w *Writer) checkConflicts(dirs []*dirNode) error {
	type dh struct {
		h uint64
		d *dirNode
	}
	var hs []dh
	for _, d := range dirs {
		if d.unchecked {
			hs = append(hs, dh{maphash.String(w.logSeed, d.Path), d})
		}
	}
	if len(hs) == 0 {
		return nil
	}
	slices.SortFunc(hs, func(a, b dh) int { return cmp.Compare(a.h, b.h) })
	keys := make([]uint64, len(hs))
	for i := range hs {
		keys[i] = hs[i].h
	}
	set := newHashSet(keys)
	var clash *dirNode
	err := w.log.scan(func(h uint64) {
		if !set.has(h) {
			return
		}
		i, _ := slices.BinarySearchFunc(hs, h, func(e dh, h uint64) int { return cmp.Compare(e.h, h) })
		for ; i < len(hs) && hs[i].h == h; i++ {
			if clash == nil || hs[i].d.Path < clash.Path {
				clash = hs[i].d
			}
		}
	})
	if err != nil {
		return err
	}
	if clash != nil {
		return newErr(w.path, clash.Path, ErrConflict, "a file, and a directory of other files")
	}
	return nil
}
