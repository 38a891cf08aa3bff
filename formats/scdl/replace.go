package scdl

import (
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/safefile"
)

// archiveEntries are the names an SCDL archive holds at its top level,
// whoever wrote it (bionemo-scdl, or this package): its header, arrays,
// neighbor arrays, metadata, feature indices and the members this
// package keeps beside the cells.
var archiveEntries = map[string]bool{
	HeaderFile: true, DataFile: true, RowPtrFile: true, ColPtrFile: true, MetadataFile: true, VersionFile: true,
	Features: true, VarFeatures: true, ObsFeatures: true, strings.TrimSuffix(MetaPrefix, "/"): true,
	"neighbor_indices.npy": true, "neighbor_indices_ptr.npy": true, "neighbor_values.npy": true,
}

// replaceable tells whether dst, which exists, is an SCDL archive that
// Overwrite may replace: an empty directory, or a directory (not a link
// to one) whose header.sch
// decodes, holding nothing at its top level but what an archive holds
// (the names above, the feature indices' files, and temporary files of
// this package's runs). Anything else (a file, a directory holding .git
// or notes) is ErrNotArchive, naming it: replacing it would delete what
// it holds.
func replaceable(dst string) error {
	refuse := func(format string, args ...any) error {
		return errorf(dst, -1, ErrNotArchive, format+" (--force replaces an SCDL archive, nothing else)", args...)
	}
	st, err := os.Lstat(dst)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return refuse("not a directory (%v)", st.Mode().Type())
	}
	entries, err := os.ReadDir(dst)
	if err != nil {
		return err
	}
	if len(entries) == 0 {
		return nil // holds nothing to lose
	}
	b, err := readSmallFile(filepath.Join(dst, HeaderFile), maxHeaderSize)
	if err != nil {
		return refuse("no readable %s: %v", HeaderFile, unwrapErr(err))
	}
	h, err := DecodeHeader(b)
	if err != nil {
		return refuse("%s is not an SCDL header: %v", HeaderFile, err)
	}
	allowed := func(name string) bool {
		if archiveEntries[name] || strings.HasPrefix(name, safefile.TempPrefix) || name == rowSpoolFile {
			return true
		}
		for _, fi := range h.FeatureIndices {
			for _, f := range fi.Files {
				if first, _, _ := strings.Cut(path.Clean(f), "/"); first == name {
					return true
				}
			}
		}
		return false
	}
	for _, e := range entries {
		if !allowed(e.Name()) {
			return refuse("it holds %s, which no SCDL archive has", human.Name(e.Name()))
		}
	}
	return nil
}
