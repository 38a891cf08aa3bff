// Package spool brings tar shards from where they live to plain local
// files that a scan can map and read at any offset: a URL is fetched
// (package remote), a compressed shard or standard input is decompressed
// (package compressed), each once, into a temporary copy beside the
// output. It owns the copies' life: remote shards prefetched in shard
// order, copies that grow from the front as a scan follows them, within
// a window of disk (Spool.Window: the copies a conversion is done with
// go when newer ones need the room, and come again by range requests,
// checked against their ETag, if asked for again), claims of size
// checked against the disk before a byte is written, the copies of dead
// processes swept, and every wait ending with its context.
//
// It sits above remote and formats/compressed and below fold and convert:
// it must not import a dataset format other than formats/compressed, nor
// fold, convert or the command line. Format packages must not import it
// (formats do no networking).
package spool
