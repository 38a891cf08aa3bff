// Package all registers every loader's plug-in with package loaders: a
// program that writes or checks other loaders' indexes imports it for its
// side effects, as image/png is imported for image.Decode.
//
// It writes and checks other loaders' indexes from a scan of tar shards:
// it imports fold and the formats, never the command line, a test helper
// or a benchmark.
package all
