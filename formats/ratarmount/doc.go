// Package ratarmount writes and reads the SQLite index that ratarmount
// keeps beside a tar archive, <archive>.index.sqlite (train_0000.tar ->
// train_0000.tar.index.sqlite), as ratarmount-core 0.11.1's
// SQLiteIndexedTar writes it: index version 0.7.0, backend
// "SQLiteIndexedTar", default arguments. When ratarmount mounts an archive
// and finds such an index that passes its load-time checks, it uses it as
// is instead of reading every header of the archive again; writing it
// while the shard is scanned anyway spares that first pass.
//
// # What the index holds
//
// Table files has one row per member that Python's tarfile lists (pax
// global headers are not members), in archive order, then one row per
// parent directory that no directory member provides (ratarmount's
// "parentfolders"), sorted by (path, name). A row names its member by
// path (the parent directory: "" at the root, else "/a/b") and name (the
// last component), after Python's posixpath.normpath of "/" + the member's
// name: "./a//b/../c" is path "/a", name "c"; "./" is the root's own row,
// path "" and name "". Then:
//
//   - offsetheader: the first block of the member's header chain (its pax
//     or GNU long-name header, when it has one; not a pax global header
//     before them); offset: its payload.
//   - size: the size Python's tarfile reports: the header's size field (or
//     pax size), even for links and directories, whose payload is empty;
//     the expanded size of a sparse file.
//   - mtime REAL, mode with the file-type bits ratarmount adds (0o100644
//     for a regular file, 0o40755 for a directory; none for hard links and
//     block devices), type: the header's type flag byte as a one-byte BLOB
//     (Python passes bytes), linkname, uid, gid.
//   - istar, isgenerated 0 and recursiondepth 0 (no recursive mounting);
//     issparse 1 for sparse members.
//
// A generated parent directory row has the offsets of the first member
// below it, size 0, mtime 0, mode 0o40555, type the integer 5 and
// isgenerated 0: ratarmount writes that 0, not 1.
//
// Names are decoded as ratarmount decodes them (UTF-8, surrogateescape);
// bytes that are not UTF-8 cannot be stored as text, so ratarmount stores
// them escaped as the four characters \xNN, and so does this package.
//
// Extended attributes (pax SCHILY.xattr.* and LIBARCHIVE.xattr.* records)
// go to tables xattrkeys and xattrsdata, read through view xattrs. Table
// metadata holds the archive's os.stat (tarstats), the creation arguments,
// the backend name and whether the archive is a GNU incremental one;
// table versions, ratarmount's version and the index version.
//
// # What ratarmount checks when it loads an index
//
// The checks of ratarmount-core 0.11.1 (SQLiteIndex._load_index and
// SQLiteIndexedTar._check_metadata), which an index written here passes:
//
//   - the file is an uncompressed SQLite database with a files table and no
//     filestmp or parentfolders table (those mark an unfinished index);
//   - metadata backendName, when present, is "SQLiteIndexedTar" (another
//     name is an index of another backend, which ratarmount refuses);
//   - tarstats st_size is the archive's size: a smaller archive makes the
//     index stale; a larger one is taken as appended to, which ratarmount
//     accepts only for an archive of 64 MiB or more, at most three times
//     the indexed size, with 100 rows or more and the same index version
//     (it then reads only what was appended), and otherwise rebuilds;
//   - the 1024 bytes after the payload of the row with the largest offset
//     (rounded up to 512) are zeros, the end-of-archive blocks; if not, the
//     archive is taken as appended to, as above;
//   - with --verify-mtime only, tarstats st_mtime equals the archive's
//     st_mtime as Python computes it (a float of seconds);
//   - the arguments and the index version are compared with its own, but a
//     difference only prints a warning; the ratarmount version is not read.
//
// An index that fails a check is deleted and built again.
//
// # Quirks of ratarmount kept as they are
//
// The row of a member whose name is the root ("./", or an empty pax path)
// has path "" and name "", and ratarmount answers for "/" with a root of
// its own: such a regular file cannot be reached. An archive that ends
// without its end-of-archive blocks gets an index that ratarmount itself
// refuses at the next mount (the second check above), below 64 MiB. Every
// member is a row, duplicates included (the last one is the one shown);
// generated parent rows say isgenerated 0.
//
// # Archives ratarmount cannot index, and archives this package refuses
//
// Python's tarfile lists no member in an archive of zeros only, or of no
// byte: ratarmount then stops with an error and writes no index, and
// WriteTo returns ErrEmpty. Builder.Add returns ErrUnsupported for the
// members whose row this package cannot compute as ratarmount would
// (GNU incremental archives, Solaris extended headers, pax records that
// move Python's tarfile elsewhere than the scanner); see Builder.Add.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package ratarmount
