package taridx_test

import (
	"context"
	"path/filepath"
	"testing"

	_ "github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
	_ "github.com/itarconv/itarconv/formats/taridx"
)

// TestConformance runs the conformance suite every format runs. TARIDX
// has no Create of its own: the sample is the index a fold of tar shards
// is written with.
func TestConformance(t *testing.T) {
	formattest.Run(t, formattest.Format{Name: "taridx",
		Make: func(t testing.TB, dir string) string {
			out := filepath.Join(dir, "fold")
			in := &formattest.Rows{Shards: formattest.Sample()}
			if _, err := registry.Lookup("tar").Create(context.Background(), in, out, registry.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(out, "train.taridx")
		},
		UncheckedIndex: "a TARIDX file records no checksum",
	})
}
