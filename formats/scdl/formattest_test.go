package scdl_test

import (
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/scdl"
)

// TestConformance runs the conformance suite every format runs, on
// archives rebuilt from the cells (and the files beside them) of the
// reference implementation's.
func TestConformance(t *testing.T) {
	const conf = "testdata/conformance/scdl/"
	const unchecked = "an SCDL archive records no checksum (bionemo-scdl 0.1.x)"
	formattest.Run(t, formattest.Format{Name: "scdl", Out: "sample",
		Sample: formattest.ReadSample(t, "scdl", conf+"basic_50x30_f32/scdl"),
		Other:  formattest.ReadSample(t, "scdl", conf+"counts_uint8/scdl"),
		Files: func(out string) []string {
			var files []string
			for _, f := range []string{scdl.HeaderFile, scdl.DataFile, scdl.RowPtrFile, scdl.ColPtrFile} {
				files = append(files, filepath.Join(out, f))
			}
			return files
		},
		UncheckedIndex: unchecked,
		UncheckedData:  unchecked,
	})
}
