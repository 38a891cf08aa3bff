//go:build !linux

package mds

import "os"

// writePieces writes pieces back to back at off.
func writePieces(f *os.File, pieces [][]byte, off int64) error {
	for _, p := range pieces {
		if _, err := f.WriteAt(p, off); err != nil {
			return err
		}
		off += int64(len(p))
	}
	return nil
}
