// Package tarfile reads tar shards header by header and writes folds of tar
// shards. One Member type describes an entry both ways: the Scanner returns
// it, the Writer takes it.
//
// Reading lists the members of a tar archive by reading its headers only:
// payloads are never read, so a shard of any size is scanned at the cost of
// its headers. It reads ustar, v7, old GNU, GNU (././@LongLink names and link
// names, base-256 numbers), pax (per-member 'x' and global 'g' records) and
// star headers, verifies every header checksum and reports GNU and pax sparse
// members without reading their payload. Sizes and offsets are 64-bit.
//
// Writing produces a fold of tar shards, <fold>_NNNN.tar, starting a new
// shard when the current one would pass a size limit. Headers are ustar where
// the member fits, pax where a name or value needs it (long or non-ASCII
// names, sub-second times, large ids). Shards are written under temporary
// names and renamed into place only when the whole fold is complete, with the
// digits the final count needs, so that their names sort in fid order.
//
// Names are bytes, as a tar header holds them: not necessarily UTF-8, and
// kept as they are both ways.
package tarfile
