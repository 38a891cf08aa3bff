// Package mds reads and writes MosaicML Streaming's MDS datasets: a
// directory of an index.json (version 2) and shards shard.NNNNN.mds,
// each optionally compressed (shard.NNNNN.mds.zstd, .gz, .snappy) and
// hashed, as MosaicML's MDSWriter writes them and its MDSReader and
// StreamingDataset read them.
//
// A shard holds its number of samples (uint32), the offsets of its
// samples (uint32 each, one more than the samples), the writer's
// configuration as JSON, then the samples: for every column of variable
// size its length (uint32), then each column's bytes, in the order the
// index names the columns. Every integer is little-endian.
//
// As rows, a sample is one file a column, named key.column, as
// WebDataset names a sample's members: the key is the sample's __key__
// column where it has one (what this package writes), else the sample's
// number in the dataset, zero-padded to 8 digits. A column's bytes are
// the member's, except for numbers stored as numbers (int, int8..uint64,
// float16..float64), which read as their decimal text (floats as numpy
// prints them: 65500.0, 0.0001, 1e-05, nan); encodings that
// hold structured values (pil, ndarray, list[...], jpeg_array, pkl) read
// as the bytes MDS stores, never decoded (a pickle is never loaded).
//
// Writing, the members of one key become one sample with a column per
// extension, in the order they come, and a __key__ column. A column's
// encoding is the richest that reads back as the same bytes, chosen as
// its shard begins from the values of its name so far: int for .cls,
// .cls2, .id, .index and .inx values that are integers written
// canonically (no sign but a minus, no leading zero, no space); json for
// .json values that parse; jpeg and png for images that start with their
// signature; str for text (.txt, .text, .json, .transcript) that is
// UTF-8; bytes for the rest. A value the encoding cannot hold closes the
// shard, and its column is plainer from then on. A sample whose columns
// differ from the shard's starts a new shard too, so that no sample
// lacks a column. A member without an extension, one whose extension is
// not UTF-8, or a second member of one extension in a sample is refused
// (ErrUnkeepable); rows that are not files are left out, with a warning.
//
// Shards stream to their files (see sink.go): memory is a few 4 MiB
// buffers whatever the shard size and the members. A shard of more than
// 4 MiB of samples keeps room for its header before them, padded with
// spaces after the configuration's JSON; a smaller one is the bytes
// MosaicML's writer writes.
//
// Reading checks every shard against the index (its size, its hashes
// where this package computes them: md5, sha1, sha2 and sha3, xxh64),
// its header against its index entry, and that every sample's values
// fill it exactly. Compressed shards (zstd, gz, bz2, snappy) are read as
// a stream; brotli is not read. LitData's layout is not read.
package mds
