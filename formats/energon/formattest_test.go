package energon_test

import (
	"context"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/energon" // registers the loader
)

// TestConformance runs the conformance suite every loader's index runs,
// on indexes package loaders writes and checks.
func TestConformance(t *testing.T) {
	formattest.RunLoader(t, formattest.Loader{Name: "energon",
		Build: func(ctx context.Context, shards []string) ([]string, error) {
			return loaders.Build(ctx, "energon", shards, "")
		},
		Detect:    loaders.Detect,
		Check:     loaders.Problems,
		Unchecked: "index.sqlite is an SQLite database, which no checksum covers; index.uuid and .info.json's energon_version are compared with nothing the shards hold; split.yaml reads the same without its last newline",
	})
}
