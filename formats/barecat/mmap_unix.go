//go:build unix

package barecat

import (
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f from offset off (a multiple of the page
// size) read-only; nil when that is not possible.
func mapFile(f *os.File, off, size int64) []byte {
	if size <= 0 || size > math.MaxInt {
		return nil
	}
	data, err := unix.Mmap(int(f.Fd()), off, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil
	}
	return data
}

func unmapFile(data []byte) { unix.Munmap(data) }
