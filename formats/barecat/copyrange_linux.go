package barecat

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// copyFileRange copies what copy_file_range will of c into dst, and says
// how much: 0 with no error where the kernel or the file systems cannot,
// so that the caller copies the rest itself.
func copyFileRange(dst *os.File, c copyRun) (int64, error) {
	var done int64
	for done < c.n {
		roff, woff := c.srcOff+done, c.off+done
		n, err := unix.CopyFileRange(int(c.src.Fd()), &roff, int(dst.Fd()), &woff, int(min(c.n-done, 1<<30)), 0)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil && done == 0 && (errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EXDEV) ||
			errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EBADF)):
			return 0, nil
		case err != nil:
			return done, fmt.Errorf("copying %d bytes at %d of %s: %w", c.n-done, roff, c.src.Name(), err)
		case n == 0:
			return done, fmt.Errorf("%s: copying %d bytes at %d: %w", c.src.Name(), c.n-done, roff, io.ErrUnexpectedEOF)
		}
		done += int64(n)
	}
	return done, nil
}
