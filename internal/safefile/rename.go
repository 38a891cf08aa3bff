package safefile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// renameByLink renames old to new unless new exists, where no rename can
// refuse to replace: a file is linked under new (link(2) fails with EEXIST
// rather than replace) and its old name removed. A directory, or a file
// on a file system without hard links, is renamed after a look at new: a
// rename then races with another writer only in that moment, and a
// directory is never put over a non-empty one (rename refuses).
func renameByLink(old, new string) error {
	fi, err := os.Lstat(old)
	if err != nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: unwrapPath(err)}
	}
	if !fi.IsDir() {
		err := os.Link(old, new)
		if err == nil {
			os.Remove(old)
			return nil
		}
		if errors.Is(err, fs.ErrExist) || !linkUnsupported(err) {
			return err
		}
	}
	if _, err := os.Lstat(new); err == nil {
		return &os.LinkError{Op: "rename", Old: old, New: new, Err: syscall.EEXIST}
	}
	err = os.Rename(old, new)
	var le *os.LinkError
	if errors.As(err, &le) && errors.Is(le.Err, syscall.ENOTEMPTY) {
		le.Err = syscall.EEXIST
	}
	return err
}

// linkUnsupported tells an error of a file system that makes no hard
// links (FAT, some FUSE and network ones) from any other.
func linkUnsupported(err error) bool {
	return errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EOPNOTSUPP) ||
		errors.Is(err, syscall.ENOSYS) || errors.Is(err, syscall.EMLINK)
}
