package wids_test

import (
	"context"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/wids" // registers the loader
)

// TestConformance runs the conformance suite every loader's index runs,
// on indexes package loaders writes and checks.
func TestConformance(t *testing.T) {
	formattest.RunLoader(t, formattest.Loader{Name: "wids",
		Build: func(ctx context.Context, shards []string) ([]string, error) {
			return loaders.Build(ctx, "wids", shards, "")
		},
		Detect: loaders.Detect,
		Check:  loaders.Problems,
	})
}
