//go:build !linux

package spool

// freeSpace cannot tell the free space here: a copy too large for its
// disk fails when the disk is full, naming its directory.
func freeSpace(string) (uint64, bool) { return 0, false }
