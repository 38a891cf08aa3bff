// Package shardgen writes deterministic WebDataset-style tar shards: the
// synthetic source of "itarconv bench --synthetic", and the datasets of the
// development benchmarks under bench/. The same parameters give the same
// bytes on every machine.
//
// It is product code (the itarconv binary links it): it imports only the
// standard library, and never a test helper or anything under bench/.
//
// It imports no command line, no test helper and no benchmark.
package shardgen
