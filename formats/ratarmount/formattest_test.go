package ratarmount_test

import (
	"context"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/ratarmount" // registers the loader
)

// TestConformance runs the conformance suite every loader's index runs,
// on indexes package loaders writes and checks.
func TestConformance(t *testing.T) {
	formattest.RunLoader(t, formattest.Loader{Name: "ratarmount",
		Build: func(ctx context.Context, shards []string) ([]string, error) {
			return loaders.Build(ctx, "ratarmount", shards, "")
		},
		Detect:    loaders.Detect,
		Check:     loaders.Problems,
		Unchecked: "the index is an SQLite database, which no checksum covers (SQLite reads a short last page as zeros)",
	})
}
