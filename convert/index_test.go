package convert

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/taridx"
)

// TestTooManyShards: a 16-bit fid addresses 65536 shards; one more is an
// error before anything is read or written, never a wrap.
func TestTooManyShards(t *testing.T) {
	out := filepath.Join(t.TempDir(), "train.taridx")
	shards := make([]string, taridx.MaxShards+1)
	for i := range shards {
		shards[i] = "missing.tar"
	}
	_, err := fold.BuildIndex(context.Background(), shards, out, fold.IndexOptions{})
	if err == nil || !strings.Contains(err.Error(), "65537 shards") {
		t.Fatalf("got %v, want an error naming 65537 shards", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("output exists after the error: %v", err)
	}
}

// TestContiguousOption: --contiguous writes glzn's enforce_contiguous order.
func TestContiguousOption(t *testing.T) {
	root, _ := conformanceCases(t)
	for _, c := range []string{"duplicates", "noncontiguous"} {
		dir := filepath.Join(root, c)
		folds, err := taridx.Discover(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "train.taridx")
		buildFold(t, folds[0].Shards, out, fold.IndexOptions{Contiguous: true, Workers: 2})
		got, _ := os.ReadFile(out)
		want, _ := os.ReadFile(filepath.Join(dir, "train.taridx.enforced.ref"))
		if len(want) == 0 || string(got) != string(want) {
			t.Errorf("%s: --contiguous output differs from glzn's enforce_contiguous", c)
		}
	}
}
