package safefile

import (
	"os"

	"golang.org/x/sys/unix"
)

// reserve allocates the blocks of [off, off+n), the file's size kept; it
// tells whether the file system did.
func reserve(f *os.File, off, n int64) bool {
	return unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_KEEP_SIZE, off, n) == nil
}
