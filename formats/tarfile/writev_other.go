//go:build !(darwin || linux || openbsd || illumos)

package tarfile

import "os"

func writeVectors(f *os.File, iov [][]byte) error { return writeSlices(f, iov) }
