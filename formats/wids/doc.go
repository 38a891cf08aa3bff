// Package wids writes and reads the shard index of WebDataset's indexed
// loader, wids: the JSON file `widsindex create` writes over a list of tar
// shards (shardindex.json), as that tool writes it, byte for byte. It names
// each shard by a URL, which the loader resolves against the index's own
// directory, with its file size, optionally its MD5 sum, and its number of
// samples.
//
// The number of samples must be the one the loader counts when it opens a
// shard, for the loader maps a dataset-wide sample index to a shard and a
// sample in it through these numbers alone: a count too high makes it ask
// a shard for samples it does not have, a count too low hides samples.
// The loader counts in its own way, which is not the way tar readers list
// members (see Counter): names are the raw name fields of the header
// blocks, repeated names are one, and a sample is a run of consecutive
// names with the same key.
//
// The loader opens shards by mapping them into memory: they must be
// uncompressed tar files.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package wids
