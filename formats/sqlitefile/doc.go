// Package sqlitefile writes an SQLite 3 database file in one go, for bulk
// loads, following SQLite's published file format
// (https://www.sqlite.org/fileformat2.html) instead of going through an
// SQL engine.
//
// Why: loaders such as ratarmount (<shard>.index.sqlite) and
// Megatron-Energon (.nv-meta/index.sqlite) read their indexes of tar
// members from SQLite databases, and we write them for millions of members
// at about the speed we scan tar headers. An SQL engine inserting one row
// at a time through its b-tree balancing (modernc.org/sqlite does some
// 300k rows/s) is ten times too slow for that; a bulk load knows every row
// in advance and can lay out the b-trees directly.
//
// How: rows are appended to a table in rowid order and written to full
// leaf pages as they come (memory does not grow with the rows, only with
// the keys of the indexes, which are kept in order as they come if they
// come nearly in order, as a tar's members do, and, given
// Options.TempFile, go out as sorted runs past Options.Memory, merged at
// Close: then memory does not grow with the keys either); Close sorts the keys of
// the indexes that are not in order, writes the index b-trees bottom up,
// the interior pages of every table, and last the first page: the file
// header and sqlite_schema. The result is an ordinary
// database (rollback journal, UTF-8, schema format 4, no free pages) that
// passes PRAGMA integrity_check, as if sqlite3 had written it.
//
// The caller passes each row's values in the types the columns' affinities
// would give them (as INSERT would store them), and declares the indexes
// SQLite itself creates for a table's UNIQUE and PRIMARY KEY constraints
// (Table.AutoIndex) and the INTEGER PRIMARY KEY column that is the rowid
// (Table.RowidColumn). A generated column's value is the caller's too,
// computed as SQLite would: a VIRTUAL one is left out of the records and
// kept in the keys of the indexes over it. Writer.Analyze writes
// sqlite_stat1 as an ANALYZE would. The writer reads the column definitions enough to
// hold the caller to that: it refuses, with ErrSchema, what it would
// write otherwise than SQLite (a COLLATE other than BINARY, DESC in a
// key, an index whose column numbers are not the columns its statement
// names, automatic indexes or a rowid column that are not the
// statement's, a WITHOUT ROWID table other than one keyed by its first
// columns and without other indexes), and, with ErrType, a value that SQLite would
// store in another type (text "12" in an INTEGER column, 3.0 in a NUMERIC
// one, a number in a TEXT one, anything but an integer in a STRICT
// table's INTEGER column) or a NULL in a NOT NULL column.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package sqlitefile
