// Package shardset turns what a user types for a set of tar shards into
// the shards' paths, in order: files, WebDataset brace patterns
// (data/train-{000000..000146}.tar), globs ('data/*.tar'), @FILE lists and
// directories, whose shards it groups into folds by name. It knows file
// names only, never a shard's contents.
//
// It imports no command line, no test helper and no benchmark.
package shardset
