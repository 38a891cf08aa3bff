// Package wids is the loaders plug-in of WebDataset wids' shard index of a
// dataset (the file format is package formats/wids's).
//
// It writes and checks other loaders' indexes from a scan of tar shards:
// it imports fold and the formats, never the command line, a test helper
// or a benchmark.
package wids
