package convert

import (
	"archive/tar"
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tbl"
)

// TestSentinels: errors a caller may act on are sentinels, found with
// errors.Is through the context the message adds.
func TestSentinels(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "train_0000.tar")
	writeTar(t, shard, []member{{name: "b.jpg", typ: tar.TypeLink, link: "a.jpg"}})
	_, err := TarToBarecat(context.Background(), []string{shard}, filepath.Join(dir, "x.barecat"), BarecatOptions{})
	if !errors.Is(err, tbl.ErrHardlinkTarget) {
		t.Errorf("hard link to nothing: %v", err)
	}
	many := make([]string, 65537)
	for i := range many {
		many[i] = shard
	}
	if _, err := fold.BuildIndex(context.Background(), many, filepath.Join(dir, "x.taridx"), fold.IndexOptions{}); !errors.Is(err, fold.ErrTooManyShards) {
		t.Errorf("65537 shards: %v", err)
	}
}
