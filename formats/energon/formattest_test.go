package energon_test

import (
	"context"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/formattest"
)

// TestConformance runs the conformance suite every loader's index runs,
// on indexes fold writes and checks.
func TestConformance(t *testing.T) {
	formattest.RunLoader(t, formattest.Loader{Name: "energon",
		Build: func(ctx context.Context, shards []string) ([]string, error) {
			l := fold.NewLoaders(fold.Energon(""))
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
		Unchecked: "index.sqlite is an SQLite database, which no checksum covers; index.uuid and .info.json's energon_version are compared with nothing the shards hold; split.yaml reads the same without its last newline",
	})
}
