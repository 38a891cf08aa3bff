// Package bloom is a growing, cache-blocked Bloom filter of 64-bit hashes:
// a few bytes per element tell "certainly new" from "maybe seen", so that
// the exact answer (from an index on disk) is asked for rarely.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package bloom
