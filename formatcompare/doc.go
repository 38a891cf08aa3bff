// Package formatcompare compares the dataset formats itarconv writes on one
// fold of tar shards: it converts the fold into each format with the
// library's own conversions, then times, side by side in one run, the
// build, the bytes on disk, opening the index, random-access reads of one
// seeded list of samples (page cache warm, and cold where the kernel lets
// the files' pages be dropped) and a sequential read of every sample, each
// through the format's own reader. Every byte read is checked against a
// hash of the source's payload: a format that returns wrong bytes is a
// failure, not a result.
//
// It is the engine of "itarconv bench", so it is product code: it imports
// the library's packages (convert, fold, formats/...) and formatcompare/shardgen
// for the synthetic source, and never a test helper (testing/testutil) or
// anything under bench/, which holds the development benchmarks and may
// import this package. TestBinaryDeps keeps the binary free of them.
package formatcompare
