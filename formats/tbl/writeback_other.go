//go:build !linux

package tbl

import "os"

// startWriteback does nothing where the system cannot start a range's
// writeback on request: the commit's sync writes it all.
func startWriteback(*os.File, int64, int64) {}

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
