//go:build !linux

package tbl

import "os"

// startWriteback does nothing where the system cannot start a range's
// writeback on request: the commit's sync writes it all.
func startWriteback(*os.File, int64, int64) {}

func startWritebackAll(*os.File) {}
