package barecat

import (
	"fmt"
	"io"
	"os"
)

// copyFileRangeFn is copyFileRange, a variable for tests of the copy
// through a buffer.
var copyFileRangeFn = copyFileRange

// copyRange copies c.n bytes at c.srcOff of c.src to c.off of dst: in the
// kernel where it can (copyFileRange), else through a buffer.
func copyRange(dst *os.File, c copyRun) error {
	done, err := copyFileRangeFn(dst, c)
	if err != nil {
		return err
	}
	if done < c.n {
		buf := make([]byte, min(c.n-done, copyBufSize))
		for done < c.n {
			k := min(c.n-done, int64(len(buf)))
			n, err := c.src.ReadAt(buf[:k], c.srcOff+done)
			if int64(n) < k {
				if err == nil || err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return fmt.Errorf("%s: reading %d bytes at %d: %w", c.src.Name(), k, c.srcOff+done, err)
			}
			if _, err := dst.WriteAt(buf[:k], c.off+done); err != nil {
				return err
			}
			done += k
		}
	}
	return nil
}
