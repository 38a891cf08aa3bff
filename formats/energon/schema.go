package energon

import "github.com/itarconv/itarconv/formats/sqlitefile"

// The schema of index.sqlite, in the order energon creates it, each
// statement as SQLite keeps it in sqlite_master: SQLite stores a CREATE
// statement's own text from its name on (energon's "IF NOT EXISTS" and the
// whitespace around the statement fall away; the whitespace inside stays,
// so it is part of the format). energon creates both tables, fills them,
// then creates the indexes; the UNIQUE constraint brings its own index
// (sqlite_autoindex_samples_1) with the first table. No pragma of
// energon's is stored in the file (busy_timeout is the connection's), and
// user_version stays 0.
const (
	createSamples = `CREATE TABLE samples (
                    tar_file_id INTEGER NOT NULL,
                    sample_key TEXT NOT NULL UNIQUE,
                    sample_index INTEGER NOT NULL,
                    byte_offset INTEGER,
                    byte_size INTEGER
                )`
	createSampleParts = `CREATE TABLE sample_parts (
                    tar_file_id INTEGER,
                    sample_index INTEGER,
                    part_name TEXT,
                    content_byte_offset INTEGER,
                    content_byte_size INTEGER
                )`
	createSamplesByTarAndIdx = `CREATE INDEX idx_samples_by_tar_and_idx ON samples(tar_file_id, sample_index)`
	createSamplePartsSeq     = `CREATE INDEX idx_sample_parts_seq ON sample_parts(tar_file_id, sample_index, content_byte_offset)`
	createSamplePartsFull    = `CREATE INDEX idx_sample_parts_full ON sample_parts(tar_file_id, sample_index, part_name, content_byte_offset, content_byte_size)`
)

// indexTable is a table of index.sqlite: its CREATE statement, its
// columns in the order of the rows tables gives, and the columns of its
// UNIQUE constraints in the statement's order. SQLite gives each such
// constraint an index of its own (sqlite_autoindex_<table>_<N>), which a
// writer of the file must build as SQLite would.
type indexTable struct {
	Name    string
	Create  string
	Columns []string
	Unique  []string
}

// indexIndex is an index created by a CREATE INDEX statement, over
// columns of a table.
type indexIndex struct {
	Name    string
	Table   string
	Create  string
	Columns []string
}

// Table names.
const (
	tableSamples     = "samples"
	tableSampleParts = "sample_parts"
)

// indexTables are created first, in this order (the rows of tables name
// them by their place here); indexIndexes after the rows.
var (
	indexTables = []indexTable{
		{tableSamples, createSamples, []string{"tar_file_id", "sample_key", "sample_index", "byte_offset", "byte_size"}, []string{"sample_key"}},
		{tableSampleParts, createSampleParts, []string{"tar_file_id", "sample_index", "part_name", "content_byte_offset", "content_byte_size"}, nil},
	}
	indexIndexes = []indexIndex{
		{"idx_samples_by_tar_and_idx", tableSamples, createSamplesByTarAndIdx, []string{"tar_file_id", "sample_index"}},
		{"idx_sample_parts_seq", tableSampleParts, createSamplePartsSeq, []string{"tar_file_id", "sample_index", "content_byte_offset"}},
		{"idx_sample_parts_full", tableSampleParts, createSamplePartsFull, []string{"tar_file_id", "sample_index", "part_name", "content_byte_offset", "content_byte_size"}},
	}
)

// Places of the tables in indexTables, as tables names them.
const (
	samplesTable = iota
	samplePartsTable
)

// tables gives index.sqlite's rows in the order energon inserts them, for
// any writer of the file: the table's place in indexTables and the row's
// values, in the table's column order, each in the storage class SQLite
// stores it in (INTEGER for the INTEGER columns, TEXT for the TEXT ones:
// the values need no conversion by the columns' affinity). fn must not
// keep row, whose memory the next call reuses. The values are
// sqlitefile's, a struct without pointers to allocate: a row of
// interfaces would cost an allocation a value, a good part of the time
// the file takes to write.
//
// energon's workers read the shards in parallel and its writer inserts
// their rows as they come: each table gets a shard's rows in tar order,
// but the shards' rows interleave as the workers happen to finish. The one
// order that does not depend on chance is shard after shard, in
// tar_file_id order, which is what energon writes when one worker reads
// the shards, and what the oracle's files hold. The two tables fill
// independently (their rowids are their own), so all samples come first,
// then all parts.
func tables(shards []ShardSamples, fn func(table int, row []sqlitefile.Value) error) error {
	row := make([]sqlitefile.Value, 5)
	for id, s := range shards {
		for i, x := range s.Samples {
			row[0], row[1], row[2], row[3], row[4] = sqlitefile.Int(int64(id)), sqlitefile.Text(x.Key), sqlitefile.Int(int64(i)), sqlitefile.Int(x.Offset), sqlitefile.Int(x.Size)
			if err := fn(samplesTable, row); err != nil {
				return err
			}
		}
	}
	for id, s := range shards {
		for _, p := range s.Parts {
			row[0], row[1], row[2], row[3], row[4] = sqlitefile.Int(int64(id)), sqlitefile.Int(int64(p.Sample)), sqlitefile.Text(p.Name), sqlitefile.Int(p.Offset), sqlitefile.Int(p.Size)
			if err := fn(samplePartsTable, row); err != nil {
				return err
			}
		}
	}
	return nil
}
