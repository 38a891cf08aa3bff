// Package energon writes and reads the files Megatron-Energon's
// `energon prepare` writes for a WebDataset, as energon's own code writes
// them, so that energon's loader takes a dataset prepared here as its own.
//
// Beside each tar shard, <shard>.tar.idx: a flat array of little-endian
// uint64, entry i the offset in the shard where sample i's first member
// begins (its own header, or the pax or GNU long-name header before it),
// then one more entry, the offset where the archive's content ends (its
// end-of-archive blocks): N samples give N+1 entries.
//
// In the dataset's .nv-meta folder (WriteMeta, ReadMeta): index.sqlite,
// every sample and every part of the dataset with their offsets; .info.json,
// the number of samples of each shard; split.yaml, which shards make the
// train, val and test parts; index.uuid, which names this version of the
// index for energon's caches.
//
// A sample is a run of consecutive regular members with the same key: the
// name up to the first dot of its basename, directory included (see
// SplitName for the exact rule). A member whose name has no key, or which
// starts with a "__...__" component (energon's metadata), is no part of a
// sample.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package energon
