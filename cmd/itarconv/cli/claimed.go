package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/itarconv/itarconv/formats/registry"
)

// A damaged input is reported as the format it claims to be, by its name
// or layout, not as "a format no one knows": a .tbl whose magic is gone is
// a corrupt TBL file (exit 1), not a usage error.

// corrupt labels a data error with the format the input claims to be.
// Errors of the environment (missing file, permissions, space) pass as they
// are.
func corrupt(format string, err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) || envError(err) {
		return err
	}
	label := format
	if f := registry.Lookup(format); f != nil {
		label = f.Label
	}
	return fmt.Errorf("corrupt %s: %w", label, err)
}

// checkClaimed reports path as a corrupt file of the format it claims
// when its content is not that format: with the error its format gives
// (registry.Format.Damaged).
func checkClaimed(path string) error {
	f := registry.Claimed(path)
	if f == nil || f.Damaged == nil || f.Detect(path) {
		return nil
	}
	return corrupt(f.Name, f.Damaged(path))
}

// checkClaimedSource checks a conversion's single source.
func checkClaimedSource(srcs []string) error {
	if len(srcs) != 1 || srcs[0] == "-" {
		return nil
	}
	return checkClaimed(srcs[0])
}

// envError tells an error of the environment (exit 3): no space, no
// permission, a read-only file system.
func envError(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EACCES, syscall.EPERM, syscall.EROFS} {
		if errors.Is(err, e) {
			return true
		}
	}
	return errors.Is(err, fs.ErrPermission)
}
