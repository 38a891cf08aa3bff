// Package fold works with an indexed fold: the tar shards of one fold and the
// TARIDX file that indexes them. It opens a fold from a dataset directory or
// an index file, finds a sample's member in O(1) reads, lists rows with the
// names their tar headers hold, and verifies that an index still matches its
// shards.
//
// It imports no command line, no test helper and no benchmark.
package fold
