// Package kmerge merges sorted runs (spilled to a file, or in memory) into
// one sorted stream: a k-way merge for external sorts (a SQLite index's
// keys, a Barecat writer's records) whose runs need no heap.Interface.
//
// It imports nothing of the project.
package kmerge
