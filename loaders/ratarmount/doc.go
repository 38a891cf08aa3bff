// Package ratarmount is the loaders plug-in of ratarmount's SQLite index
// of each shard (the file format is package formats/ratarmount's).
//
// It writes and checks other loaders' indexes from a scan of tar shards:
// it imports fold and the formats, never the command line, a test helper
// or a benchmark.
package ratarmount
