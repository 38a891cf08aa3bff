// Package formatcompare compares the dataset formats itarconv writes on one
// fold of tar shards: it converts the fold into each format with the
// library's own conversions, then times, side by side in one run, the
// build, the bytes on disk, opening the index, random-access reads of one
// seeded list of samples (page cache warm, and cold where the kernel lets
// the files' pages be dropped: each cold read checked with mincore to find
// its pages not resident) and a sequential read of every sample.
//
// Each format is read as its own loader reads it, so that the figures
// compare the formats rather than itarconv's readers: tar + TARIDX with the
// shards kept open and one positioned read at the header's offset + 512,
// Barecat with a lookup in its SQLite index and a positioned read from its
// shard, TBL with a copy out of the mapped file. No read checks anything
// itself: every byte read is compared with a hash of the source's payload,
// the same for every format and timed apart, as is each format's own check
// (tar's header checksum, Barecat's crc32c, TBL v2's CRC-16). A format that
// returns wrong bytes is a failure, not a result.
//
// It is the engine of "itarconv bench", so it is product code: it imports
// the library's packages (convert, fold, formats/...) and formatcompare/shardgen
// for the synthetic source, and never a test helper (testing/testutil) or
// anything under bench/, which holds the development benchmarks and may
// import this package. TestBinaryDeps keeps the binary free of them.
package formatcompare
