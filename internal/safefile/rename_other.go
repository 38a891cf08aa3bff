//go:build !linux

package safefile

import (
	"fmt"
	"os"
	"path/filepath"
)

// exchange swaps a and b by three renames (no atomic exchange here): a
// kill in between leaves b's old content under a temporary name of this
// process.
func exchange(a, b string) error {
	aside := filepath.Join(filepath.Dir(b), fmt.Sprintf("%s%s-%s-old", TempPrefix, owner, filepath.Base(b)))
	if err := os.Rename(b, aside); err != nil {
		return err
	}
	if err := os.Rename(a, b); err != nil {
		os.Rename(aside, b)
		return err
	}
	return os.Rename(aside, a)
}

// renameNoReplace renames old to new unless new exists: by a hard link
// here, which no system makes over an existing name.
func renameNoReplace(old, new string) error { return renameByLink(old, new) }
