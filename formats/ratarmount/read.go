package ratarmount

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/itarconv/itarconv/formats/sqlitefile"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/sqliteuri"
	_ "modernc.org/sqlite" // registers the database/sql driver "sqlite", for Read
)

// Index is the content of an index: its tables' rows in rowid order.
type Index struct {
	Files    []File
	XAttrs   []XAttr    // view xattrs, in the order of table xattrsdata
	Metadata []KeyValue // table metadata
	Versions []Version  // table versions
}

// File is a row of table files.
type File struct {
	Path, Name           string // "/a/b" and "c" for a/b/c; "" and "" for the root
	OffsetHeader, Offset int64  // of the header chain and of the payload
	Size                 int64
	MTime                float64
	Mode                 int64 // with the file-type bits
	Type                 byte  // the tar type flag (generated rows: '5')
	Linkname             string
	UID, GID             int64
	IsTar, IsSparse      bool
	IsGenerated          bool
	RecursionDepth       int64
}

// XAttr is a member's extended attribute, by the offsetheader of its row.
type XAttr struct {
	OffsetHeader int64
	Key          string
	Value        []byte
}

// KeyValue is a row of table metadata.
type KeyValue struct{ Key, Value string }

// Version is a row of table versions.
type Version struct {
	Name, Version       string
	Major, Minor, Patch int64
}

// Meta is the value of a metadata key.
func (ix *Index) Meta(key string) (string, bool) {
	for _, kv := range ix.Metadata {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return "", false
}

// TarStats reads metadata "tarstats"; an index without it has zero
// TarStats (nothing to check).
func (ix *Index) TarStats() (TarStats, error) {
	s, ok := ix.Meta("tarstats")
	if !ok {
		return TarStats{}, nil
	}
	return ParseTarStats(s)
}

// Index is the content WriteTo writes, for an archive whose os.Stat is
// archive: what Read returns for that file. It lets a check compare an
// index on disk with the archive it describes without writing one.
func (b *Builder) Index(archive os.FileInfo) (*Index, error) {
	ix := &Index{}
	var keys []string
	err := b.tables(archive, func(table string, row []sqlitefile.Value) error {
		switch table {
		case TableFiles:
			f := File{
				Path: row[0].Text(), Name: row[1].Text(),
				OffsetHeader: row[2].Int64(), Offset: row[3].Int64(), Size: row[4].Int64(),
				MTime: row[5].Float64(), Mode: row[6].Int64(), Linkname: row[8].Text(),
				UID: row[9].Int64(), GID: row[10].Int64(),
				IsSparse: row[12].Int64() != 0,
			}
			if row[7].Kind() == sqlitefile.KindBlob {
				f.Type, _ = typeFlag([]byte(row[7].Text()))
			} else {
				f.Type, _ = typeFlag(row[7].Int64())
			}
			ix.Files = append(ix.Files, f)
		case TableXattrKeys:
			keys = append(keys, row[1].Text())
		case TableXattrsData:
			ix.XAttrs = append(ix.XAttrs, XAttr{OffsetHeader: row[0].Int64(), Key: keys[row[1].Int64()-1], Value: []byte(row[2].Text())})
		case TableMetadata:
			ix.Metadata = append(ix.Metadata, KeyValue{row[0].Text(), row[1].Text()})
		case TableVersions:
			ix.Versions = append(ix.Versions, Version{row[0].Text(), row[1].Text(), row[2].Int64(), row[3].Int64(), row[4].Int64()})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return ix, nil
}

// typeFlag reads a type column: a one-byte BLOB (the flag itself) or, in
// the rows ratarmount generates, the integer that int() makes of a digit
// flag.
func typeFlag(v any) (byte, bool) {
	switch t := v.(type) {
	case []byte:
		if len(t) == 1 {
			return t[0], true
		}
	case int64:
		if t >= 0 && t <= 9 {
			return byte('0' + t), true
		}
	}
	return 0, false
}

// sqliteMagic starts every SQLite database file.
const sqliteMagic = "SQLite format 3\x00"

// Read reads the index at path. A file that is not SQLite, or whose schema,
// index version (other than 0.6 or 0.7, which share the files table) or
// backend differs, is ErrFormat, as is an unfinished index (ratarmount's
// temporary tables still there).
func Read(path string) (ix *Index, err error) {
	return ReadContext(context.Background(), path)
}

// ReadContext is Read, stopped by ctx (an index of millions of members
// takes a while to read).
func ReadContext(ctx context.Context, path string) (*Index, error) {
	// bad marks what makes the file no ratarmount index of this reader's;
	// an error caused by ctx is ctx's, not the file's.
	bad := func(err error) error {
		if cerr := ctx.Err(); cerr != nil {
			return cerr
		}
		return fmt.Errorf("%s: %w: %v", path, ErrFormat, err)
	}
	if ok, err := isSQLite(path); err != nil {
		return nil, err
	} else if !ok {
		return nil, bad(errors.New("not an SQLite database"))
	}
	uri, err := sqliteuri.File(path, "mode=ro")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)

	if err := checkSchema(ctx, db); err != nil {
		return nil, bad(err)
	}
	ix := &Index{}
	if err := ix.readVersions(ctx, db); err != nil {
		return nil, bad(err)
	}
	if err := ix.readMetadata(ctx, db); err != nil {
		return nil, bad(err)
	}
	// A malformed tarstats value says what is wrong with it; it is no
	// question of the index being ratarmount's.
	if _, err := ix.TarStats(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if err := ix.readFiles(ctx, db); err != nil {
		return nil, bad(err)
	}
	if err := ix.readXAttrs(ctx, db); err != nil {
		return nil, bad(err)
	}
	return ix, nil
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
	magic := make([]byte, len(sqliteMagic))
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == sqliteMagic, nil
}

// checkSchema refuses a database that lacks one of ratarmount's tables,
// has one with other columns, or still holds the temporary tables of an
// index ratarmount did not finish.
func checkSchema(ctx context.Context, db *sql.DB) error {
	objects := map[string]string{}
	err := query(ctx, db, `SELECT type, name FROM sqlite_master`, func(v []any) error {
		typ, _ := v[0].(string)
		name, _ := v[1].(string)
		objects[name] = typ
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading the schema: %v", err)
	}
	for _, t := range []string{"filestmp", "parentfolders"} {
		if objects[t] != "" {
			return fmt.Errorf("table %s: an index ratarmount did not finish", t)
		}
	}
	for _, t := range tableOrder {
		if objects[t] != "table" {
			return fmt.Errorf("no table %s", t)
		}
		cols, err := columnNames(ctx, db, t)
		if err != nil {
			return fmt.Errorf("reading the columns of %s: %v", t, err)
		}
		if !slices.Equal(cols, columns[t]) {
			return fmt.Errorf("table %s has columns %v, not %v", t, cols, columns[t])
		}
	}
	return nil
}

// columnNames lists the columns of table, in order.
func columnNames(ctx context.Context, db *sql.DB, table string) ([]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_info(?)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols = append(cols, c)
	}
	return cols, rows.Err()
}

// readVersions reads table versions and refuses an index whose version is
// not one this reader knows (0.6 and 0.7 share the files table).
func (ix *Index) readVersions(ctx context.Context, db *sql.DB) error {
	err := query(ctx, db, `SELECT name, version, major, minor, patch FROM versions ORDER BY rowid`, func(v []any) error {
		var ver Version
		var ok1, ok2 bool
		if ver.Name, ok1 = v[0].(string); !ok1 {
			return fmt.Errorf("version name %s", value(v[0]))
		}
		if ver.Version, ok2 = v[1].(string); !ok2 {
			return fmt.Errorf("version of %s: %s", human.Name(ver.Name), value(v[1]))
		}
		ver.Major, _ = v[2].(int64)
		ver.Minor, _ = v[3].(int64)
		ver.Patch, _ = v[4].(int64)
		ix.Versions = append(ix.Versions, ver)
		return nil
	})
	if err != nil {
		return fmt.Errorf("table versions: %v", err)
	}
	i := slices.IndexFunc(ix.Versions, func(v Version) bool { return v.Name == "index" })
	if i < 0 {
		return errors.New("no index version")
	}
	if v := ix.Versions[i]; v.Major != 0 || v.Minor < 6 || v.Minor > 7 {
		return fmt.Errorf("index version %s (%d.%d.%d); this reader knows 0.6 and 0.7", human.Name(v.Version), v.Major, v.Minor, v.Patch)
	}
	return nil
}

// readMetadata reads table metadata and refuses an index of another
// backend than ratarmount's tar one.
func (ix *Index) readMetadata(ctx context.Context, db *sql.DB) error {
	err := query(ctx, db, `SELECT key, value FROM metadata ORDER BY rowid`, func(v []any) error {
		k, ok1 := v[0].(string)
		val, ok2 := v[1].(string)
		if !ok1 || !ok2 {
			return fmt.Errorf("row (%s, %s) is not text", value(v[0]), value(v[1]))
		}
		ix.Metadata = append(ix.Metadata, KeyValue{k, val})
		return nil
	})
	if err != nil {
		return fmt.Errorf("table metadata: %v", err)
	}
	if name, ok := ix.Meta("backendName"); ok && name != BackendName {
		return fmt.Errorf("index of backend %s, not %q", human.Name(name), BackendName)
	}
	return nil
}

// readFiles reads table files, in rowid order.
func (ix *Index) readFiles(ctx context.Context, db *sql.DB) error {
	n := 0
	err := query(ctx, db, `SELECT `+strings.Join(quoted(columns[TableFiles]), ", ")+` FROM files ORDER BY rowid`, func(v []any) error {
		n++
		f, err := fileRow(v)
		if err != nil {
			return fmt.Errorf("row %d: %v", n, err)
		}
		ix.Files = append(ix.Files, f)
		return nil
	})
	if err != nil {
		return fmt.Errorf("table files: %v", err)
	}
	return nil
}

// readXAttrs reads the xattrs, each with its key's name, in the order of
// table xattrsdata.
func (ix *Index) readXAttrs(ctx context.Context, db *sql.DB) error {
	err := query(ctx, db, `SELECT d.offsetheader, k.name, d.value FROM xattrsdata AS d JOIN xattrkeys AS k ON k.id = d.keyid ORDER BY d.rowid`, func(v []any) error {
		var x XAttr
		var ok bool
		if x.OffsetHeader, ok = v[0].(int64); !ok {
			return fmt.Errorf("offsetheader %s", value(v[0]))
		}
		if x.Key, ok = v[1].(string); !ok {
			return fmt.Errorf("key %s", value(v[1]))
		}
		switch t := v[2].(type) {
		case []byte:
			x.Value = bytes.Clone(t)
		case string:
			x.Value = []byte(t)
		default:
			return fmt.Errorf("value %s", value(v[2]))
		}
		ix.XAttrs = append(ix.XAttrs, x)
		return nil
	})
	if err != nil {
		return fmt.Errorf("xattrs: %v", err)
	}
	return nil
}

// value prints a column's value for a message: text and blobs cut (a
// hostile index can hold a value of any size).
func value(v any) string {
	switch x := v.(type) {
	case string:
		return human.Name(x)
	case []byte:
		return "blob " + human.NameBytes(x)
	case nil:
		return "NULL"
	}
	return fmt.Sprint(v)
}

func quoted(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = strconv.Quote(n)
	}
	return out
}

// query runs q and hands fn each row's values as the driver gives them:
// int64, float64, string, []byte or nil.
func query(ctx context.Context, db *sql.DB, q string, fn func([]any) error) error {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// fileRow converts a files row, columns in table order.
func fileRow(v []any) (File, error) {
	var f File
	var ok bool
	text := func(i int, dst *string) error {
		if *dst, ok = v[i].(string); !ok {
			return fmt.Errorf("%s is %T, not text", columns[TableFiles][i], v[i])
		}
		return nil
	}
	integer := func(i int, dst *int64) error {
		if *dst, ok = v[i].(int64); !ok {
			return fmt.Errorf("%s is %T, not an integer", columns[TableFiles][i], v[i])
		}
		return nil
	}
	boolean := func(i int, dst *bool) error {
		var n int64
		if err := integer(i, &n); err != nil {
			return err
		}
		*dst = n != 0
		return nil
	}
	err := errors.Join(
		text(0, &f.Path), text(1, &f.Name),
		integer(2, &f.OffsetHeader), integer(3, &f.Offset), integer(4, &f.Size),
		integer(6, &f.Mode), text(8, &f.Linkname), integer(9, &f.UID), integer(10, &f.GID),
		boolean(11, &f.IsTar), boolean(12, &f.IsSparse), boolean(13, &f.IsGenerated),
		integer(14, &f.RecursionDepth),
	)
	if err != nil {
		return f, err
	}
	switch t := v[5].(type) {
	case float64:
		f.MTime = t
	case int64:
		f.MTime = float64(t)
	default:
		return f, fmt.Errorf("mtime is %T, not a number", v[5])
	}
	if f.Type, ok = typeFlag(v[7]); !ok {
		return f, fmt.Errorf("type %v is not a tar type flag", v[7])
	}
	return f, nil
}

// CheckArchive tells whether ratarmount would take the index as describing
// the archive fi (see TarStats.Check): nil, or an error wrapping ErrStale.
func (ix *Index) CheckArchive(fi os.FileInfo, verifyMTime bool) error {
	ts, err := ix.TarStats()
	if err != nil {
		return err
	}
	return ts.Check(fi, verifyMTime)
}
