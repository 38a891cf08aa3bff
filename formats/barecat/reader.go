package barecat

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math"
	"os"
	"strings"
	"sync"

	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/sqliteuri"
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Order is the order Files streams rows in.
type Order int

const (
	// ByPath: byte order of the path (SQLite's BINARY collation, the
	// order of Go's string comparison).
	ByPath Order = iota
	// ByAddress: by shard, then offset: the order to read the shards
	// front to back.
	ByAddress
)

// Archive is an open Barecat archive. Its methods may be called from
// several goroutines at once; the readers Open returns read the shards
// with positioned reads and are independent of each other.
type Archive struct {
	indexPath, base, layout string
	db                      *sql.DB
	major, minor            int
	shardLimit              int64
	warnings                []string
	shardPaths              []string
	shardSizes              []int64

	mu     sync.Mutex
	shards []*os.File          // opened on first use
	views  map[*Views]struct{} // mapped by ViewFiles, not yet released
	closed bool
}

// Open opens the archive at path read-only. path may be the index of a
// 0.3 archive (its shards are path-shard-NNNNN), the base path of a 0.2
// archive (index path-sqlite-index) or that index's own path.
//
// Open checks what barecat needs to open an archive: a config table with
// schema_version_major 0 (other majors: ErrVersion; a minor other than 3
// is accepted with a warning, see Warnings), a shard_size_limit row, the
// root directory row and shard 00000, and, beyond barecat, that every
// shard the files table names exists. Rows are checked as they are read.
func Open(path string) (*Archive, error) {
	indexPath, base, layout, err := resolve(path)
	if err != nil {
		return nil, err
	}
	a := &Archive{indexPath: indexPath, base: base, layout: layout}
	if err := a.open(); err != nil {
		if a.db != nil {
			a.db.Close()
		}
		return nil, err
	}
	return a, nil
}

// resolve finds the index and the shards' base path, as barecat does: a
// path that is a file is the index, else path-sqlite-index. An index
// named ...-sqlite-index whose shards are named after the name without
// the suffix is the old layout's index.
func resolve(path string) (indexPath, base, layout string, err error) {
	if st, err := os.Stat(path); err == nil && !st.IsDir() {
		if b, ok := strings.CutSuffix(path, OldIndexSuffix); ok && b != "" &&
			exists(ShardPath(b, 0)) && !exists(ShardPath(path, 0)) {
			return path, b, Layout02, nil
		}
		return path, path, Layout03, nil
	}
	old := path + OldIndexSuffix
	if st, err := os.Stat(old); err == nil && !st.IsDir() {
		return old, path, Layout02, nil
	}
	return "", "", "", &Error{Path: path, Err: fs.ErrNotExist,
		Detail: "no Barecat index: neither this file nor " + old + " exists"}
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// sqliteMagic opens every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// open checks the index and finds the shards, in the order barecat would
// fail on them: the file itself, its tables, its config, the root row, then
// the shards.
func (a *Archive) open() error {
	if ok, err := isSQLite(a.indexPath); err != nil {
		return err
	} else if !ok {
		return a.fail(ErrFormat, "not an SQLite database")
	}
	if err := a.connect(); err != nil {
		return err
	}
	if err := a.checkTables(); err != nil {
		return err
	}
	if err := a.readVersion(); err != nil {
		return err
	}
	if err := a.readShardLimit(); err != nil {
		return err
	}
	if err := a.checkRoot(); err != nil {
		return err
	}
	if err := a.findShards(); err != nil {
		return err
	}
	return a.checkShardsUsed()
}

// fail is an error about the index file.
func (a *Archive) fail(kind error, format string, args ...any) error {
	return newErr(a.indexPath, "", kind, format, args...)
}

// isSQLite reports whether path starts with SQLite's magic, so that a file
// of another kind is refused as no index before the driver sees it. A
// FIFO, device or directory is refused before it is opened: opening a FIFO
// would block until a writer came.
func isSQLite(path string) (bool, error) {
	f, err := pathguard.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [len(sqliteMagic)]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == sqliteMagic, nil
}

// checkTables refuses an index without the files and dirs tables, or
// without the config table barecat's versioned schema added.
func (a *Archive) checkTables() error {
	tables := map[string]bool{}
	rows, err := a.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return a.fail(ErrFormat, "reading the schema: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return a.fail(ErrFormat, "reading the schema: %v", err)
		}
		tables[name] = true
	}
	if err := rows.Err(); err != nil {
		return a.fail(ErrFormat, "reading the schema: %v", err)
	}
	if !tables["files"] || !tables["dirs"] {
		return a.fail(ErrFormat, "no files or dirs table")
	}
	if !tables["config"] {
		return a.fail(ErrVersion, "no config table: an index from before barecat's versioned schema (barecat upgrade converts it)")
	}
	return nil
}

// readVersion reads the schema version: another major is ErrVersion; a
// minor other than 3 is read as 3, with a warning saying what that means.
func (a *Archive) readVersion() error {
	major, ok, err := a.configInt("schema_version_major")
	switch {
	case err != nil:
		return err
	case !ok:
		return a.fail(ErrVersion, "no schema_version_major in config: an unversioned index (barecat upgrade converts it)")
	case major != SchemaMajor:
		return a.fail(ErrVersion, "schema major version %d; this reader knows %d", major, SchemaMajor)
	}
	minor, ok, err := a.configInt("schema_version_minor")
	if err != nil {
		return err
	}
	if !ok {
		a.warnings = append(a.warnings, "no schema_version_minor in config; read as 0.0")
	}
	if minor < 0 || minor > math.MaxInt32 {
		return a.fail(ErrCorrupt, "schema_version_minor %d", minor)
	}
	a.major, a.minor = int(major), int(minor)
	switch {
	case minor < 3:
		a.warnings = append(a.warnings, fmt.Sprintf(
			"schema 0.%d: its triggers could miscount directory statistics after directories were moved or deleted (barecat upgrade rebuilds them; Verify recomputes them)", minor))
	case minor > 3:
		a.warnings = append(a.warnings, fmt.Sprintf("schema 0.%d is newer than 0.3; read as 0.3", minor))
	}
	return nil
}

// readShardLimit reads shard_size_limit, which barecat needs to open an
// archive (it sizes the shards a writer starts).
func (a *Archive) readShardLimit() error {
	limit, ok, err := a.configInt("shard_size_limit")
	switch {
	case err != nil:
		return err
	case !ok:
		return a.fail(ErrCorrupt, "no shard_size_limit in config")
	case limit <= 0:
		return a.fail(ErrCorrupt, "shard_size_limit %d", limit)
	}
	a.shardLimit = limit
	return nil
}

// checkRoot refuses an index without the root directory's row, which
// barecat reads first.
func (a *Archive) checkRoot() error {
	var root int
	switch err := a.db.QueryRow(`SELECT count(*) FROM dirs WHERE path = ''`).Scan(&root); {
	case err != nil:
		return a.fail(ErrFormat, "reading dirs: %v", err)
	case root == 0:
		return a.fail(ErrCorrupt, "no root directory row (path '') in dirs")
	}
	return nil
}

// findShards lists the shard files, numbered from 0 up to the first that
// is missing. Shard 0 must exist, even empty, as barecat needs it.
func (a *Archive) findShards() error {
	for n := 0; ; n++ {
		p := ShardPath(a.base, n)
		st, err := os.Stat(p)
		if err != nil || !st.Mode().IsRegular() {
			if n == 0 {
				why := "it does not exist"
				if err == nil {
					why = "it is not a regular file"
				} else if t, lerr := os.Readlink(p); lerr == nil {
					why = "it is a dangling symlink to " + t
				}
				return newErr(p, "", ErrMissingShard, "the first shard of %s: %s (barecat needs it even when empty)", a.indexPath, why)
			}
			break
		}
		a.shardPaths = append(a.shardPaths, p)
		a.shardSizes = append(a.shardSizes, st.Size())
	}
	a.shards = make([]*os.File, len(a.shardPaths))
	return nil
}

// checkShardsUsed refuses, beyond barecat, an index whose files name a
// shard past the last shard file: the archive has lost that shard.
func (a *Archive) checkShardsUsed() error {
	var maxShard any
	if err := a.db.QueryRow(`SELECT max(shard) FROM files`).Scan(&maxShard); err != nil {
		return a.fail(ErrFormat, "reading files: %v", err)
	}
	if maxShard == nil {
		return nil
	}
	m, null, ok := intValue(maxShard)
	if !ok || null || m < 0 {
		return a.fail(ErrCorrupt, "files.shard holds %v", maxShard)
	}
	if m >= int64(len(a.shardPaths)) {
		return newErr(ShardPath(a.base, len(a.shardPaths)), "", ErrMissingShard,
			"files of %s use shards up to %d, but the shard files stop at %d", a.indexPath, m, len(a.shardPaths))
	}
	return nil
}

// connect opens the index read-only. A database in WAL mode, in a
// directory this process cannot write, cannot be opened so (SQLite needs
// its -shm file); such an index is opened immutable, which is safe when
// there is no -wal or -journal file beside it, since then the main file
// holds every committed transaction.
func (a *Archive) connect() error {
	try := func(query string) error {
		uri, err := sqliteuri.File(a.indexPath, query)
		if err != nil {
			return err
		}
		db, err := sql.Open(driverName, uri)
		if err != nil {
			return err
		}
		db.SetMaxIdleConns(2)
		if _, err := db.Exec(`SELECT count(*) FROM sqlite_master`); err != nil {
			db.Close()
			return err
		}
		a.db = db
		return nil
	}
	err := try("mode=ro")
	if err != nil && !exists(a.indexPath+"-wal") && !exists(a.indexPath+"-journal") {
		if try("mode=ro&immutable=1") == nil {
			a.warnings = append(a.warnings, "opened immutable: SQLite could not open it read-only in place")
			return nil
		}
	}
	if err != nil {
		return newErr(a.indexPath, "", ErrFormat, "opening the SQLite database: %v", err)
	}
	return nil
}

// configInt reads config.value_int of key; ok is false without such a row.
func (a *Archive) configInt(key string) (v int64, ok bool, err error) {
	var raw any
	switch err := a.db.QueryRow(`SELECT value_int FROM config WHERE key = ?`, key).Scan(&raw); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, false, nil
	case err != nil:
		return 0, false, newErr(a.indexPath, "", ErrFormat, "reading config: %v", err)
	}
	v, null, okv := intValue(raw)
	if null || !okv {
		return 0, false, newErr(a.indexPath, "", ErrCorrupt, "config %s has value_int %v, not an integer", key, raw)
	}
	return v, true, nil
}

// intValue converts a column read as any: NULL, an integer, or a real
// holding an integer (an index written through a float would hold one).
func intValue(v any) (n int64, null, ok bool) {
	switch x := v.(type) {
	case nil:
		return 0, true, true
	case int64:
		return x, false, true
	case float64:
		if x == math.Trunc(x) && x >= -(1<<63) && x < 1<<63 {
			return int64(x), false, true
		}
	}
	return 0, false, false
}

// Warnings lists what Open accepted but the caller may want to know: an
// old or newer schema minor version, an index opened immutable.
func (a *Archive) Warnings() []string { return a.warnings }

// SchemaVersion is the config's schema_version_major and _minor.
func (a *Archive) SchemaVersion() (major, minor int) { return a.major, a.minor }

// Layout is Layout03 or Layout02.
func (a *Archive) Layout() string { return a.layout }

// IndexPath is the SQLite index's file.
func (a *Archive) IndexPath() string { return a.indexPath }

// ShardSizeLimit is the config's shard_size_limit (UnlimitedShardSize
// for none).
func (a *Archive) ShardSizeLimit() int64 { return a.shardLimit }

// ShardPaths lists the shard files, shard 0 first: every
// base-shard-NNNNN from 00000 up to the first number missing.
func (a *Archive) ShardPaths() []string { return a.shardPaths }

// ShardSizes are the shards' sizes when the archive was opened, in
// ShardPaths order (a symlinked shard has its target's size).
func (a *Archive) ShardSizes() []int64 { return a.shardSizes }

// Close closes the index and the shards.
func (a *Archive) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil
	}
	a.closed = true
	err := a.db.Close()
	for v := range a.views {
		v.unmap()
	}
	for _, f := range a.shards {
		if f != nil {
			if cerr := f.Close(); err == nil {
				err = cerr
			}
		}
	}
	return err
}

// NumFiles counts the rows of the files table.
func (a *Archive) NumFiles() (int64, error) {
	var n int64
	if err := a.db.QueryRow(`SELECT count(*) FROM files`).Scan(&n); err != nil {
		return 0, newErr(a.indexPath, "", ErrFormat, "counting files: %v", err)
	}
	return n, nil
}

const fileColumns = `path, shard, offset, size, crc32c, mode, uid, gid, mtime_ns`

// Files calls fn for every row of the files table, streaming them in the
// given order (memory does not grow with the archive). A row the format
// does not allow (NULL or negative shard, offset or size, a crc32c that
// is negative or above 2^32-1: barecat stores it unsigned) stops the walk
// with an ErrCorrupt *Error naming the row; fn's own error stops it and
// is returned as is.
func (a *Archive) Files(ctx context.Context, order Order, fn func(File) error) error {
	return a.scanFiles(ctx, order, func(f File, bad *Error) error {
		if bad != nil {
			return bad
		}
		return fn(f)
	})
}

// scanFiles is Files with the row errors handed to fn (Verify collects
// them).
func (a *Archive) scanFiles(ctx context.Context, order Order, fn func(File, *Error) error) error {
	q := `SELECT ` + fileColumns + ` FROM files ORDER BY path`
	if order == ByAddress {
		q = `SELECT ` + fileColumns + ` FROM files ORDER BY shard, offset`
	}
	return a.queryFiles(ctx, q, nil, fn)
}

// filesFrom is Files from the row at position skip of the order on, at
// most limit rows (all if negative). Rows at the same address are taken
// in rowid order, so that two such walks agree on where a position is.
func (a *Archive) filesFrom(ctx context.Context, order Order, skip, limit int64, fn func(File) error) error {
	q := `SELECT ` + fileColumns + ` FROM files ORDER BY path`
	if order == ByAddress {
		q = `SELECT ` + fileColumns + ` FROM files ORDER BY shard, offset, rowid`
	}
	return a.queryFiles(ctx, q+` LIMIT ? OFFSET ?`, []any{limit, skip}, func(f File, bad *Error) error {
		if bad != nil {
			return bad
		}
		return fn(f)
	})
}

// queryFiles runs a query for fileColumns and hands each row to fn, with
// what is wrong with it, if anything.
func (a *Archive) queryFiles(ctx context.Context, q string, args []any, fn func(File, *Error) error) error {
	rows, err := a.db.QueryContext(ctx, q, args...)
	if err != nil {
		return a.queryErr(ctx, "files", err)
	}
	defer rows.Close()
	vals, ptrs := scanSlots(9)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return a.queryErr(ctx, "files", err)
		}
		f, bad := a.fileRow(vals)
		if err := fn(f, bad); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return a.queryErr(ctx, "files", err)
	}
	return nil
}

func (a *Archive) queryErr(ctx context.Context, table string, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return newErr(a.indexPath, "", ErrFormat, "reading %s: %v", table, err)
}

// Lookup returns the row of the file at path (normalized first, as
// barecat does for lookups). A path with no row gives an *Error wrapping
// fs.ErrNotExist.
func (a *Archive) Lookup(path string) (File, error) {
	p, err := NormalizePath(path)
	var e *Error
	if errors.As(err, &e) {
		e.Path = a.indexPath
		return File{}, e
	}
	vals, ptrs := scanSlots(9)
	err = a.db.QueryRow(`SELECT `+fileColumns+` FROM files WHERE path = ?`, p).Scan(ptrs...)
	if errors.Is(err, sql.ErrNoRows) {
		return File{}, &Error{Path: a.indexPath, Name: p, Err: fs.ErrNotExist, Detail: "no such file"}
	}
	if err != nil {
		return File{}, newErr(a.indexPath, p, ErrFormat, "reading files: %v", err)
	}
	f, bad := a.fileRow(vals)
	if bad != nil {
		return File{}, bad
	}
	return f, nil
}

// fileRow converts a files row read as fileColumns.
func (a *Archive) fileRow(v []any) (File, *Error) {
	var f File
	switch p := v[0].(type) {
	case string:
		f.Path = p
	case []byte:
		f.Path = string(p)
	default:
		return f, newErr(a.indexPath, "", ErrCorrupt, "a files row has path %v", v[0])
	}
	bad := func(format string, args ...any) (File, *Error) {
		return f, newErr(a.indexPath, f.Path, ErrCorrupt, format, args...)
	}
	shard, null, ok := intValue(v[1])
	if !ok || null || shard < 0 || shard > math.MaxInt32 {
		return bad("shard %v", v[1])
	}
	f.Shard = int(shard)
	if f.Offset, null, ok = intValue(v[2]); !ok || null || f.Offset < 0 {
		return bad("offset %v", v[2])
	}
	if f.Size, null, ok = intValue(v[3]); !ok || null || f.Size < 0 {
		return bad("size %v", v[3])
	}
	if f.Offset > math.MaxInt64-f.Size {
		return bad("offset %d + size %d overflows", f.Offset, f.Size)
	}
	crc, null, ok := intValue(v[4])
	switch {
	case !ok:
		return bad("crc32c %v", v[4])
	case !null && crc < 0:
		return bad("crc32c %d is negative: a signed CRC (barecat stores it unsigned, and fails every read of this file)", crc)
	case crc > math.MaxUint32:
		return bad("crc32c %d is larger than 32 bits", crc)
	}
	f.CRC32C, f.HasCRC = uint32(crc), !null
	for i, dst := range []struct {
		v   *int64
		has *bool
	}{{&f.Mode, &f.HasMode}, {&f.UID, &f.HasUID}, {&f.GID, &f.HasGID}, {&f.MtimeNs, &f.HasMtime}} {
		n, null, ok := intValue(v[5+i])
		if !ok {
			return bad("%s %v", [...]string{"mode", "uid", "gid", "mtime_ns"}[i], v[5+i])
		}
		*dst.v, *dst.has = n, !null
	}
	return f, nil
}

// Dirs calls fn for every row of the dirs table, in path order. NULL
// counters read as 0.
func (a *Archive) Dirs(ctx context.Context, fn func(Dir) error) error {
	return a.queryDirs(ctx, `WHERE 1 ORDER BY path`, fn)
}

// queryDirs calls fn with the dirs rows that tail (WHERE ... ORDER BY ...)
// selects.
func (a *Archive) queryDirs(ctx context.Context, tail string, fn func(Dir) error) error {
	rows, err := a.db.QueryContext(ctx, `SELECT path, num_subdirs, num_files, num_files_tree, size_tree,
		mode, uid, gid, mtime_ns FROM dirs `+tail)
	if err != nil {
		return a.queryErr(ctx, "dirs", err)
	}
	defer rows.Close()
	vals, ptrs := scanSlots(9)
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return a.queryErr(ctx, "dirs", err)
		}
		var d Dir
		switch p := vals[0].(type) {
		case string:
			d.Path = p
		case []byte:
			d.Path = string(p)
		default:
			return newErr(a.indexPath, "", ErrCorrupt, "a dirs row has path %v", vals[0])
		}
		fields := []struct {
			name string
			v    *int64
			has  *bool
		}{
			{"num_subdirs", &d.NumSubdirs, nil}, {"num_files", &d.NumFiles, nil},
			{"num_files_tree", &d.NumFilesTree, nil}, {"size_tree", &d.SizeTree, nil},
			{"mode", &d.Mode, &d.HasMode}, {"uid", &d.UID, &d.HasUID},
			{"gid", &d.GID, &d.HasGID}, {"mtime_ns", &d.MtimeNs, &d.HasMtime},
		}
		for i, fl := range fields {
			n, null, ok := intValue(vals[1+i])
			if !ok {
				return newErr(a.indexPath, d.Path, ErrCorrupt, "directory %s %v", fl.name, vals[1+i])
			}
			*fl.v = n
			if fl.has != nil {
				*fl.has = !null
			}
		}
		if err := fn(d); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return a.queryErr(ctx, "dirs", err)
	}
	return nil
}

// shard returns the open shard n.
func (a *Archive) shard(n int) (*os.File, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return nil, newErr(a.indexPath, "", ErrClosed, "archive closed")
	}
	if a.shards[n] == nil {
		f, err := pathguard.Open(a.shardPaths[n]) // swapped for a FIFO since Open: refused
		if err != nil {
			return nil, err
		}
		a.shards[n] = f
	}
	return a.shards[n], nil
}

// check reports whether f can be read: its shard exists and holds its
// bytes.
func (a *Archive) check(f File) *Error {
	switch {
	case f.Shard < 0 || f.Offset < 0 || f.Size < 0 || f.Offset > math.MaxInt64-f.Size:
		return newErr(a.indexPath, f.Path, ErrCorrupt, "shard %d, offset %d, size %d", f.Shard, f.Offset, f.Size)
	case f.Shard >= len(a.shardPaths):
		return newErr(ShardPath(a.base, f.Shard), f.Path, ErrMissingShard, "the file is in shard %d; %d shards exist", f.Shard, len(a.shardPaths))
	case f.Offset+f.Size > a.shardSizes[f.Shard]:
		return newErr(a.shardPaths[f.Shard], f.Path, ErrBounds, "bytes %d to %d, but the shard has %d bytes",
			f.Offset, f.Offset+f.Size, a.shardSizes[f.Shard])
	}
	return nil
}

// Open returns a reader of f's bytes (f as Files or Lookup gave it). A
// file whose bytes pass the end of its shard is an ErrBounds error here.
// When the whole file has been read and it has a crc32c, the reader
// checks it: a mismatch is an ErrCRC error from the Read that reaches the
// end, along with the last bytes.
func (a *Archive) Open(f File) (*FileReader, error) {
	if err := a.check(f); err != nil {
		return nil, err
	}
	sf, err := a.shard(f.Shard)
	if err != nil {
		return nil, err
	}
	return &FileReader{f: f, r: sf, shardPath: a.shardPaths[f.Shard]}, nil
}

// FileReader reads one file's bytes from its shard. Close it when done (it
// does not own the shard, which stays open until the Archive closes).
type FileReader struct {
	f         File
	r         io.ReaderAt
	shardPath string
	off       int64 // bytes read so far
	crc       uint32
	err       error // sticky: io.EOF after a verified end, or the failure
}

// File is the row being read.
func (r *FileReader) File() File { return r.f }

// Read reads the next bytes of the file.
func (r *FileReader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	left := r.f.Size - r.off
	if left == 0 {
		return 0, r.end()
	}
	if int64(len(p)) > left {
		p = p[:left]
	}
	n, err := r.r.ReadAt(p, r.f.Offset+r.off)
	r.crc = crc32.Update(r.crc, castagnoli, p[:n])
	r.off += int64(n)
	if n < len(p) {
		if err == nil || err == io.EOF {
			r.err = newErr(r.shardPath, r.f.Path, ErrBounds, "the shard ended at byte %d, inside the file", r.f.Offset+r.off)
		} else {
			r.err = fmt.Errorf("%s: reading %s: %w", r.shardPath, human.Name(r.f.Path), err)
		}
		return n, r.err
	}
	if r.off == r.f.Size {
		if err := r.end(); err != io.EOF {
			return n, err
		}
	}
	return n, nil
}

// end checks the CRC once the whole file has been read; it returns io.EOF
// or the mismatch, and leaves it for the next Read.
func (r *FileReader) end() error {
	r.err = io.EOF
	if r.f.HasCRC && r.crc != r.f.CRC32C {
		r.err = newErr(r.shardPath, r.f.Path, ErrCRC, "the index says %08x, the bytes at offset %d have %08x",
			r.f.CRC32C, r.f.Offset, r.crc)
	}
	return r.err
}

var copyBufs = sync.Pool{New: func() any { return new([256 << 10]byte) }}

// WriteTo copies the rest of the file to w with large reads (io.Copy uses
// it). A CRC mismatch is reported after all bytes were written.
func (r *FileReader) WriteTo(w io.Writer) (int64, error) {
	buf := copyBufs.Get().(*[256 << 10]byte)
	defer copyBufs.Put(buf)
	var total int64
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			m, werr := w.Write(buf[:n])
			total += int64(m)
			if werr != nil {
				return total, werr
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// Close ends the reading. It does not check the CRC of a file not read to
// its end.
func (r *FileReader) Close() error {
	if r.err == nil {
		r.err = newErr(r.shardPath, r.f.Path, ErrClosed, "reader closed")
	}
	return nil
}

// ReadFile reads the whole of f, checking its CRC.
func (a *Archive) ReadFile(f File) ([]byte, error) {
	r, err := a.Open(f)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var b bytes.Buffer
	b.Grow(int(f.Size))
	if _, err := r.WriteTo(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scanSlots returns n values and, for rows.Scan, pointers to them.
func scanSlots(n int) (vals, ptrs []any) {
	vals, ptrs = make([]any, n), make([]any, n)
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	return vals, ptrs
}
