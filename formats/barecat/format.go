package barecat

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/itarconv/itarconv/internal/human"
)

const (
	// SchemaMajor and SchemaMinor are the schema version the Writer
	// writes. The reader accepts major 0, any minor.
	SchemaMajor = 0
	SchemaMinor = 3

	// UnlimitedShardSize is the shard_size_limit barecat stores for "no
	// limit" (2^63-1).
	UnlimitedShardSize int64 = 1<<63 - 1

	// Layout03 is the layout of barecat 0.3: the archive path is the
	// index, shards are PATH-shard-NNNNN.
	Layout03 = "0.3"
	// Layout02 is the layout up to barecat 0.2.7: the index is
	// PATH-sqlite-index, shards are PATH-shard-NNNNN.
	Layout02 = "0.2"

	// OldIndexSuffix names the index of the old layout.
	OldIndexSuffix = "-sqlite-index"
)

// ShardPath is the name of shard n of the archive whose base path is base
// (the index path in the 0.3 layout): base-shard-00042.
func ShardPath(base string, n int) string {
	return fmt.Sprintf("%s-shard-%05d", base, n)
}

// Sentinel errors, wrapped by *Error.
var (
	// ErrFormat: not a Barecat index (not SQLite, or tables missing).
	ErrFormat = errors.New("not a Barecat index")
	// ErrVersion: a schema major version other than 0.
	ErrVersion = errors.New("unsupported Barecat schema version")
	// ErrCorrupt: a row or config value the format does not allow, or a
	// required row (config, root directory) missing.
	ErrCorrupt = errors.New("corrupt Barecat index")
	// ErrMissingShard: a shard file the index needs does not exist.
	ErrMissingShard = errors.New("missing shard")
	// ErrBounds: a file's bytes pass the end of its shard.
	ErrBounds = errors.New("file extends past the end of its shard")
	// ErrCRC: a file's bytes do not match its crc32c.
	ErrCRC = errors.New("CRC-32C mismatch")
	// ErrStats: a directory's stored counters differ from its files.
	ErrStats = errors.New("directory statistics do not match the files")
	// ErrInvalidPath: a path that is absolute, has a ".." component, is
	// empty, holds a NUL byte or is not valid UTF-8.
	ErrInvalidPath = errors.New("invalid archive path")
	// ErrDuplicate: a path added twice.
	ErrDuplicate = errors.New("path already in the archive")
	// ErrConflict: a path that is both a file and a directory (a file
	// where a directory is, or a file's ancestor that is a file).
	ErrConflict = errors.New("path is both a file and a directory")
	// ErrTooLarge: a file larger than the shard size limit.
	ErrTooLarge = errors.New("file larger than the shard size limit")
	// ErrShortData: the data reader ended before the file's size.
	ErrShortData = errors.New("data shorter than the file's size")
	// ErrBadRow: a file or directory row whose mode, uid or gid no file
	// system or tar entry can carry as stored (see Archive.CheckFile).
	ErrBadRow = errors.New("bad metadata in a row")
	// ErrMissingFile: a link to a file the archive does not have.
	ErrMissingFile = errors.New("no such file in the archive")
	// ErrClosed: the Writer or Archive was already closed or aborted.
	ErrClosed = errors.New("closed")
	// ErrNotArchive: a file that Overwrite (--force) would replace is not
	// a Barecat index or shard: Overwrite replaces an archive, nothing
	// else of the same name.
	ErrNotArchive = errors.New("not a Barecat archive, so not replaced")
)

// Error locates a problem: the file on disk (an index or a shard) and,
// where one is concerned, the archive member.
type Error struct {
	Path   string // file on disk: the index or a shard ("" from NormalizePath)
	Name   string // path of the member inside the archive, if any
	Err    error  // one of the sentinels above
	Detail string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Path != "" {
		b.WriteString(e.Path)
		b.WriteString(": ")
	}
	if e.Name != "" {
		fmt.Fprintf(&b, "%s: ", human.Name(e.Name))
	}
	fmt.Fprintf(&b, "%v", e.Err)
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

func (e *Error) Unwrap() error { return e.Err }

func newErr(path, name string, kind error, format string, args ...any) *Error {
	return &Error{Path: path, Name: name, Err: kind, Detail: fmt.Sprintf(format, args...)}
}

// File is one row of the files table. The Has fields tell a NULL column
// from a zero. Shard, Offset and CRC32C are where the Writer put the bytes;
// Add ignores them.
type File struct {
	Path    string
	Shard   int
	Offset  int64
	Size    int64
	CRC32C  uint32
	HasCRC  bool
	Mode    int64
	UID     int64
	GID     int64
	HasMode bool
	HasUID  bool
	HasGID  bool
	MtimeNs int64 // nanoseconds since the Unix epoch
	// HasMtime is false when mtime_ns is NULL.
	HasMtime bool
}

// Dir is one row of the dirs table. The root directory is Path "". The
// four counters are what barecat's triggers keep: direct subdirectories,
// direct files, files in the whole subtree and their total size. AddDir
// ignores them (the Writer computes them).
type Dir struct {
	Path         string
	NumSubdirs   int64
	NumFiles     int64
	NumFilesTree int64
	SizeTree     int64
	Mode         int64
	UID          int64
	GID          int64
	MtimeNs      int64
	HasMode      bool
	HasUID       bool
	HasGID       bool
	HasMtime     bool
}

// NormalizePath returns p as barecat stores it: "." components and empty
// components (repeated or trailing slashes) removed, so "./a//b/" becomes
// "a/b" as Python's os.path.normpath makes it. Where barecat would quietly
// strip a leading "/" or resolve ".." against the archive root, this
// refuses with ErrInvalidPath: such a name in a source archive is a sign
// of a path that tries to leave the tree, and the caller should decide.
// NUL bytes and invalid UTF-8 are refused too (barecat's Python paths are
// str, which cannot hold them). The root directory normalizes to "".
func NormalizePath(p string) (string, error) {
	bad := func(why string) (string, error) {
		return "", &Error{Name: p, Err: ErrInvalidPath, Detail: why}
	}
	switch {
	case strings.HasPrefix(p, "/"):
		return bad("absolute path")
	case strings.IndexByte(p, 0) >= 0:
		return bad("NUL byte")
	case !utf8.ValidString(p):
		return bad("not valid UTF-8")
	}
	if clean(p) {
		return p, nil
	}
	parts := strings.Split(p, "/")
	out := parts[:0]
	for _, c := range parts {
		switch c {
		case "", ".":
		case "..":
			return bad(`".." component`)
		default:
			out = append(out, c)
		}
	}
	return strings.Join(out, "/"), nil
}

// clean reports whether p needs no normalization: no empty, "." or ".."
// component. Most paths are clean, and this avoids allocating for them.
func clean(p string) bool {
	start := 0
	for i := 0; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		switch p[start:i] {
		case "", ".", "..":
			return p == "" // "" is the root, clean
		}
		start = i + 1
	}
	return true
}

// parentOf is the parent directory of a normalized path; "" for top-level
// names. It equals what the generated column files.parent computes for
// valid UTF-8 paths without repeated slashes.
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}
