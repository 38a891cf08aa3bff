package tbl_test

import (
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	_ "github.com/itarconv/itarconv/formats/tbl"
)

// TestConformance runs the conformance suite every format runs.
func TestConformance(t *testing.T) {
	formattest.Run(t, formattest.Format{Name: "tbl", Out: "sample.tbl",
		UncheckedIndex: "a TBL v2 file keeps its names in the metadata section, which no checksum covers (CRC-32 covers the header, CRC-16 each payload)"})
}
