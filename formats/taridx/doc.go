// Package taridx reads and writes TARIDX files, the random-access index of a
// fold of tar shards used by glzn's iTar datasets.
//
// A TARIDX file is a 64-byte little-endian header, a newline-joined block of
// extension names, a newline-joined block of "crash" stems (stems whose
// xxh64 collides with an earlier, different stem) and one 32-byte record per
// tar member: shard id, header offset, payload size, extension id, crash id
// and the xxh64 of the member's stem. A member's payload starts 512 bytes
// after its header offset.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package taridx
