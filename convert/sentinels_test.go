package convert

import (
	"archive/tar"
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestSentinels: errors a caller may act on are sentinels, found with
// errors.Is through the context the message adds.
func TestSentinels(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "train_0000.tar")
	writeTar(t, shard, []member{{name: "b.jpg", typ: tar.TypeLink, link: "a.jpg"}})
	_, err := TarToBarecat(context.Background(), []string{shard}, filepath.Join(dir, "x.barecat"), BarecatOptions{})
	if !errors.Is(err, ErrHardlinkTarget) {
		t.Errorf("hard link to nothing: %v", err)
	}
	many := make([]string, 65537)
	for i := range many {
		many[i] = shard
	}
	if _, err := BuildIndex(context.Background(), many, filepath.Join(dir, "x.taridx"), IndexOptions{}); !errors.Is(err, ErrTooManyShards) {
		t.Errorf("65537 shards: %v", err)
	}
}
