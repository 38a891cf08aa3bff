//go:build !linux

package mds

import "os"

// startWriteback does nothing here: only Linux has sync_file_range.
func startWriteback(*os.File) {}

// preallocate does nothing here.
func preallocate(*os.File, int64) {}
