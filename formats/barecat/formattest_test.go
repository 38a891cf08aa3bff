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
		Skip: map[string]string{
			"detect/foreign/plain.sqlite": "bug: Detect takes any SQLite database (its magic) for a Barecat index; ratarmount's and energon's indexes are SQLite too",
			"cancel/create":               "bug: Create with a canceled context fails with \"not a Barecat index: SQLite, opening: context canceled\", which does not wrap context.Canceled (Writer.sqlErr formats with %v)",
		}})
}
