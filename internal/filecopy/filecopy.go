package filecopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrRange: a negative size or offset.
var ErrRange = errors.New("negative size or offset")

// chunk is the most the kernel copies at once, between looks at the
// context.
const chunk = 64 << 20

// bufSize is the buffer of a copy the kernel does not make.
const bufSize = 1 << 20

// Range copies n bytes at srcOff of src to dstOff of dst, and returns how
// many it copied (n, unless an error says otherwise). Neither file's
// offset moves.
func Range(dst *os.File, dstOff int64, src *os.File, srcOff, n int64) (int64, error) {
	return RangeContext(context.Background(), dst, dstOff, src, srcOff, n)
}

// RangeContext is Range stopping, with ctx's error, when ctx is done.
func RangeContext(ctx context.Context, dst *os.File, dstOff int64, src *os.File, srcOff, n int64) (int64, error) {
	if n < 0 || srcOff < 0 || dstOff < 0 {
		return 0, fmt.Errorf("%s: copying %d bytes at %d to %d of %s: %w", src.Name(), n, srcOff, dstOff, dst.Name(), ErrRange)
	}
	done, err := kernelCopy(ctx, dst, dstOff, src, srcOff, n)
	if err != nil || done == n {
		return done, err
	}
	buf := make([]byte, min(n-done, bufSize))
	for done < n {
		if err := ctx.Err(); err != nil {
			return done, fmt.Errorf("%s: copying %d bytes at %d: %w", src.Name(), n-done, srcOff+done, err)
		}
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
	return AppendContext(context.Background(), dst, src, srcOff, n)
}

// AppendContext is Append stopping, with ctx's error, when ctx is done.
func AppendContext(ctx context.Context, dst *os.File, src *os.File, srcOff, n int64) error {
	at, err := dst.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := RangeContext(ctx, dst, at, src, srcOff, n); err != nil {
		return err
	}
	_, err = dst.Seek(at+n, io.SeekStart)
	return err
}
