// Package energon is the loaders plug-in of Megatron-Energon's index of a
// dataset (the file formats are package formats/energon's).
//
// It writes and checks other loaders' indexes from a scan of tar shards:
// it imports fold and the formats, never the command line, a test helper
// or a benchmark.
package energon
