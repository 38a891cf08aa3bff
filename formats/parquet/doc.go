// Package parquet reads and writes datasets as the Hugging Face Hub lays
// them out in Parquet: a directory whose data/ holds
// <split>-00000-of-00042.parquet files, one row per sample.
//
// Writing (Create): a row per sample, the run of members of one key as
// WebDataset's loaders read them; the key in the string column __key__,
// then one column per extension, in the order the extensions first appear:
// images ("jpg", "png", ...) as the datasets library's Image feature, a
// struct {bytes: binary, path: string}; .cls as int64 where every sample's
// bytes are a canonical decimal integer, .txt as string where every one is
// UTF-8, .json as string where every one is valid JSON; anything else, and
// those where a sample's bytes do not parse, as binary. The features go
// into the file's "huggingface" key-value metadata as the datasets library
// writes them ({"info": {"features": ...}}), so that load_dataset reads
// the columns typed. Files roll over past --shard-size of payload
// (default 500 MB, push_to_hub's), row groups past RowGroupBytes of
// payload or 128Ki rows. Pages are data pages v1 of about 1 MiB, PLAIN
// values and definition levels in RLE runs (no dictionary), uncompressed
// unless asked otherwise (CreateOptions.Compression), each with its
// CRC-32: what every Parquet reader reads. A write reads its input twice:
// a first pass names and types the columns (the members of the typed
// columns checked on the workers), a second writes. The row groups are
// written here, not by parquet-go's writer (see chunks.go): a group holds
// its values by reference (the source's mapped bytes; small ones copied),
// and its pages go to the file in vectored writes straight from them,
// on a goroutine of their own while the next group fills. parquet-go
// makes the schema and encodes the Thrift of page headers and footer.
//
// What a write keeps: every member's name and bytes, in order, so that
// reading the files back gives the same members. A sample's members that
// do not follow the column order (an extension again, or one that came
// before) start a new row of the same key; rows of one key that are not
// adjacent stay apart. What has no place is refused (ErrNotRepresentable):
// directories, links and other entries that are not files, names without
// an extension, names that are not UTF-8, an extension "__key__". Modes,
// owners and times are not kept.
//
// Reading (Open): a .parquet file, or a directory of them (a Hub dataset:
// its splits named from the file names as the datasets library names them,
// data/<split>-NNNNN-of-NNNNN.parquet first, then the train/validation/test
// keywords). A row is a sample: each non-null column becomes a member
// <key>.<column>; a struct {bytes, path} column (Image, Audio) gives its
// bytes, under the extension its column's name is, else its path's, else
// the one its bytes tell. A file without __key__ numbers its rows. A
// dataset of several splits prefixes each member with its split
// ("train/<key>.<column>"), keeping them apart. Columns of other nested
// types are left out, with a warning. Pages are read through parquet-go,
// which checks their CRC-32 where the file has one (this package writes
// them).
//
// It knows one format's bytes on disk: it imports no networking, no other
// format's joins, no command line, and no test helper.
package parquet
