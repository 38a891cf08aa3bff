//go:build !(darwin || linux || openbsd || illumos)

package tarshard

import "os"

func writeVectors(f *os.File, iov [][]byte) error { return writeSlices(f, iov) }
