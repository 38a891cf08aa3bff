//go:build !unix

package tarshard

import "os"

func writeVectors(f *os.File, iov [][]byte) error { return writeSlices(f, iov) }
