//go:build !linux

package mapped

import (
	"os"

	"github.com/itarconv/itarconv/internal/syswrite"
)

// WritePieces writes pieces back to back at off.
func WritePieces(f *os.File, pieces [][]byte, off int64) error {
	for _, p := range pieces {
		if _, err := syswrite.WriteAt(f, p, off); err != nil {
			return err
		}
		off += int64(len(p))
	}
	return nil
}
