// Package barecat reads and writes Barecat archives (isarandi/barecat): an
// SQLite index of file paths plus shard files that hold the files' bytes
// back to back, with no headers and no padding.
//
// Two on-disk layouts exist. In the current one (barecat 0.3) the archive
// path is the SQLite index itself and the shards are PATH-shard-00000,
// PATH-shard-00001, ...; in the old one (up to barecat 0.2.7) the index is
// PATH-sqlite-index and the shards are named the same way. A file's bytes
// are size bytes at offset in its shard; its crc32c, when not NULL, is the
// unsigned CRC-32C (Castagnoli) of those bytes.
//
// The index holds three tables: files (one row per file), dirs (one row
// per directory, with counters of its direct and total files and bytes,
// kept by triggers) and config (schema version, shard size limit and the
// switch that turns the triggers off during bulk loads). The Writer emits
// exactly the schema barecat 0.3.1 stores (schema_0_3.sql), so barecat can
// open and append to what it writes; it lays the index's pages out itself
// (formats/sqlitefile), rows and indexes as SQLite would hold them, not
// through SQL.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package barecat
