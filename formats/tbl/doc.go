// Package tbl reads and writes TBL files, TurboLoader's binary container for
// ML samples: a header, an index of one fixed-size entry per sample, then
// the samples' bytes back to back, so that any sample is one positioned read.
//
// Two versions exist, told apart by the magic. Version 1 ("TBL\x01", the
// layout TurboLoader's published guide describes) has a 32-byte header and
// 16-byte entries: offset, size, format. Version 2 ("TBL\x02", the only one
// today's TurboLoader reads) has a 64-byte header protected by a CRC-32 and
// 24-byte entries that add the uncompressed size, image width and height,
// per-sample flags and a CRC-16/MODBUS of the uncompressed bytes; a sample
// may be stored as one raw LZ4 block, and an optional metadata section after
// the data attaches typed blobs (JSON, ...) to samples. Everything is packed
// and little-endian. Offsets are absolute.
//
// The package follows what TurboLoader's code writes, not its guide where
// the two differ (the guide calls the v1 header_size field "reserved"), and
// the Writer reproduces its converters' files byte for byte given the same
// samples. The Reader checks more than TurboLoader's: see Open.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package tbl
