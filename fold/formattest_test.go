package fold_test

import (
	"path/filepath"
	"testing"

	_ "github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/formattest"
)

// TestConformance runs the conformance suite every format runs on the tar
// format: a fold of tar shards (one here), with its TARIDX index, in a
// directory.
func TestConformance(t *testing.T) {
	shard := func(out string) string { return filepath.Join(out, "train_0000.tar") }
	formattest.Run(t, formattest.Format{Name: "tar", Out: "sample",
		Detected:      shard,
		Files:         func(out string) []string { return []string{shard(out), filepath.Join(out, "train.taridx")} },
		UncheckedData: "a tar member's payload has no checksum",
		Skip: map[string]string{
			"damaged/train_0000.tar/empty": "an empty shard reads as an empty tar archive, as GNU tar reads one; the fold's Open does not look at train.taridx, which still lists its members",
		}})
}
