package scdl

import (
	"os"
	"path/filepath"

	"github.com/itarconv/itarconv/formats/registry"
)

func init() {
	registry.Register(&registry.Format{Name: "scdl", Label: "SCDL", Detect: Detect, Claims: claims, Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: Inspect, Verify: Verify})
}

// Detect tells whether path is an SCDL archive directory: it holds a
// header.sch file.
func Detect(path string) bool {
	st, err := os.Stat(filepath.Join(path, HeaderFile))
	return err == nil && st.Mode().IsRegular()
}

// claims: a directory holding an SCDL array file.
func claims(path string) bool {
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return false
	}
	for _, f := range []string{DataFile, RowPtrFile, ColPtrFile} {
		if _, err := os.Stat(filepath.Join(path, f)); err == nil {
			return true
		}
	}
	return false
}
