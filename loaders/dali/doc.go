// Package dali is the loaders plug-in of DALI's webdataset index of each
// shard (the file format is package formats/dali's).
//
// It writes and checks other loaders' indexes from a scan of tar shards:
// it imports fold and the formats, never the command line, a test helper
// or a benchmark.
package dali
