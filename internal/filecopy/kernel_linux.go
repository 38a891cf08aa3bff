package filecopy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// kernelCopy copies what copy_file_range will, and says how much: 0 with
// no error where the kernel or the file systems cannot, so that the
// caller copies the rest itself. It stops between chunks when ctx is
// done.
func kernelCopy(ctx context.Context, dst *os.File, dstOff int64, src *os.File, srcOff, n int64) (int64, error) {
	var done int64
	for done < n {
		roff, woff := srcOff+done, dstOff+done
		if err := ctx.Err(); err != nil {
			return done, fmt.Errorf("%s: copying %d bytes at %d: %w", src.Name(), n-done, roff, err)
		}
		k, err := unix.CopyFileRange(int(src.Fd()), &roff, int(dst.Fd()), &woff, int(min(n-done, chunk)), 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil && (errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EXDEV) ||
			errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EBADF)):
			return done, nil
		case err != nil:
			return done, fmt.Errorf("copying %d bytes at %d of %s: %w", n-done, roff, src.Name(), err)
		case k == 0 && done == 0:
			return 0, nil // some file systems copy nothing here: the caller copies
		case k == 0:
			return done, fmt.Errorf("%s: copying %d bytes at %d: %w", src.Name(), n-done, roff, io.ErrUnexpectedEOF)
		}
		done += int64(k)
	}
	return done, nil
}
