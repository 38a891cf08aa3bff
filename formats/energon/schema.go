package energon

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

// indexTable is a table of index.sqlite: its CREATE statement and its
// columns in the order of the rows tables gives.
type indexTable struct {
	Name    string
	Create  string
	Columns []string
}

// Table names.
const (
	tableSamples     = "samples"
	tableSampleParts = "sample_parts"
)

// indexTables are created first, in this order; indexIndexes after the
// rows.
var (
	indexTables = []indexTable{
		{tableSamples, createSamples, []string{"tar_file_id", "sample_key", "sample_index", "byte_offset", "byte_size"}},
		{tableSampleParts, createSampleParts, []string{"tar_file_id", "sample_index", "part_name", "content_byte_offset", "content_byte_size"}},
	}
	indexIndexes = []string{createSamplesByTarAndIdx, createSamplePartsSeq, createSamplePartsFull}
)

// tables gives index.sqlite's rows in the order energon inserts them, for
// any writer of the file: the table's name and the row's values (int64 or
// string), in the table's column order. fn must not keep row, whose
// memory the next call reuses.
//
// energon's workers read the shards in parallel and its writer inserts
// their rows as they come: each table gets a shard's rows in tar order,
// but the shards' rows interleave as the workers happen to finish. The one
// order that does not depend on chance is shard after shard, in
// tar_file_id order, which is what energon writes when one worker reads
// the shards, and what the oracle's files hold. The two tables fill
// independently (their rowids are their own), so all samples come first,
// then all parts.
func tables(shards []ShardSamples, fn func(table string, row []any) error) error {
	row := make([]any, 5)
	for id, s := range shards {
		for i, x := range s.Samples {
			row[0], row[1], row[2], row[3], row[4] = int64(id), x.Key, int64(i), x.Offset, x.Size
			if err := fn(tableSamples, row); err != nil {
				return err
			}
		}
	}
	for id, s := range shards {
		for _, p := range s.Parts {
			row[0], row[1], row[2], row[3], row[4] = int64(id), int64(p.Sample), p.Name, p.Offset, p.Size
			if err := fn(tableSampleParts, row); err != nil {
				return err
			}
		}
	}
	return nil
}
