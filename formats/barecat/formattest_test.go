package barecat_test

import (
	"testing"

	_ "github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/formattest"
)

// TestConformance runs the conformance suite every format runs.
func TestConformance(t *testing.T) {
	formattest.Run(t, formattest.Format{Name: "barecat", Out: "sample.barecat",
		UncheckedIndex: "a Barecat index is an SQLite database, which no checksum covers (CRC-32C covers each payload)",
	})
}
