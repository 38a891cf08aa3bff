package ratarmount_test

import (
	"context"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/formattest"
)

// TestConformance runs the conformance suite every loader's index runs,
// on indexes fold writes and checks.
func TestConformance(t *testing.T) {
	formattest.RunLoader(t, formattest.Loader{Name: "ratarmount",
		Build: func(ctx context.Context, shards []string) ([]string, error) {
			l := fold.NewLoaders(fold.Ratarmount(""))
			if _, err := fold.BuildIndex(ctx, shards, "", fold.IndexOptions{Loaders: l}); err != nil {
				return nil, err
			}
			if _, err := l.Finish(ctx); err != nil {
				return nil, err
			}
			return l.Outputs()
		},
		Detect: fold.DetectLoaderIndex,
		Check: func(ctx context.Context, path string) ([]string, error) {
			rep, err := fold.CheckLoaderIndex(ctx, path, nil, 1)
			if err != nil {
				return nil, err
			}
			var probs []string
			for _, p := range rep.Problems {
				probs = append(probs, p.String())
			}
			return probs, nil
		},
		Unchecked: "the index is an SQLite database, which no checksum covers (SQLite reads a short last page as zeros)",
	})
}
