// Package filecopy copies ranges of files into other files inside the
// kernel where the system allows (copy_file_range, which file systems
// with reflinks turn into shared extents), else through a buffer: how a
// merge of a partitioned run's parts concatenates data without passing
// it through the process.
package filecopy

import (
	"fmt"
	"io"
	"os"
)

// Range copies n bytes at srcOff of src to dstOff of dst, and returns how
// many it copied (n, unless an error says otherwise). Neither file's
// offset moves.
func Range(dst *os.File, dstOff int64, src *os.File, srcOff, n int64) (int64, error) {
	done, err := kernelCopy(dst, dstOff, src, srcOff, n)
	if err != nil || done == n {
		return done, err
	}
	buf := make([]byte, min(n-done, 1<<20))
	for done < n {
		k := min(int64(len(buf)), n-done)
		r, err := src.ReadAt(buf[:k], srcOff+done)
		if int64(r) < k {
			if err == nil || err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return done, fmt.Errorf("%s: reading %d bytes at %d: %w", src.Name(), k, srcOff+done, err)
		}
		if _, err := dst.WriteAt(buf[:k], dstOff+done); err != nil {
			return done, err
		}
		done += k
	}
	return done, nil
}

// Append copies n bytes at srcOff of src to the end of what was written to
// dst so far (its current offset), and moves that offset past them.
func Append(dst *os.File, src *os.File, srcOff, n int64) error {
	at, err := dst.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := Range(dst, at, src, srcOff, n); err != nil {
		return err
	}
	_, err = dst.Seek(at+n, io.SeekStart)
	return err
}
