package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tbl"
)

// A damaged input is reported as the format it claims to be, by its name
// or layout, not as "a format no one knows": a .tbl whose magic is gone is
// a corrupt TBL file (exit 1), not a usage error.

// claimedFormat is the format path holds by its content, or else claims by
// its name or layout: "scdl", "tbl", "barecat", "taridx", or "".
func claimedFormat(path string) string {
	switch {
	case isSCDL(path):
		return "scdl"
	case isTBL(path):
		return "tbl"
	case isBarecat(path):
		return "barecat"
	}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		for _, f := range []string{scdl.DataFile, scdl.RowPtrFile, scdl.ColPtrFile} {
			if _, err := os.Stat(filepath.Join(path, f)); err == nil {
				return "scdl"
			}
		}
		return ""
	}
	switch {
	case strings.HasSuffix(path, ".tbl"):
		return "tbl"
	case strings.HasSuffix(path, ".barecat"), strings.HasSuffix(path, "-sqlite-index"):
		return "barecat"
	case strings.HasSuffix(path, ".taridx"):
		return "taridx"
	}
	return ""
}

var formatLabels = map[string]string{"scdl": "SCDL", "tbl": "TBL", "barecat": "Barecat", "taridx": "TARIDX"}

// corrupt labels a data error with the format the input claims to be.
// Errors of the environment (missing file, permissions, space) pass as they
// are.
func corrupt(format string, err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) || envError(err) {
		return err
	}
	return fmt.Errorf("corrupt %s: %w", formatLabels[format], err)
}

// checkClaimed reports path as a corrupt file of the format it claims when
// its content is not that format.
func checkClaimed(path string) error {
	switch claimedFormat(path) {
	case "scdl":
		if !isSCDL(path) {
			return corrupt("scdl", fmt.Errorf("%s: %s missing: %w", path, scdl.HeaderFile, fs.ErrInvalid))
		}
	case "tbl":
		if !isTBL(path) {
			r, err := tbl.Open(path)
			if err == nil {
				r.Close()
			}
			return corrupt("tbl", err)
		}
	case "barecat":
		if !isBarecat(path) {
			a, err := barecat.Open(path)
			if err == nil {
				a.Close()
			}
			return corrupt("barecat", err)
		}
	}
	return nil
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
