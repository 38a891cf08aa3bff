package barecat

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
)

// A Source keeps the channels of the chunks in flight only, not one for
// every chunk of the archive: its memory does not grow with the number
// of files.
func TestSourceChunksInFlight(t *testing.T) {
	const chunks = 60
	out := filepath.Join(t.TempDir(), "many.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range chunks * barecatChunk {
		if err := w.Add(File{Path: fmt.Sprintf("d/%06d", i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, out)
	src := &Source{Archive: a, Order: ByAddress}
	const workers = 3
	most, files := 0, 0
	err = dataset.Run(context.Background(), src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		src.chunksMu.Lock()
		most = max(most, len(src.chunks))
		src.chunksMu.Unlock()
		files++
		return nil
	}), dataset.Options{Workers: workers})
	if err != nil {
		t.Fatal(err)
	}
	if files != chunks*barecatChunk || src.NumShards() != chunks {
		t.Fatalf("%d files in %d chunks", files, src.NumShards())
	}
	if limit := barecatAhead + 2*workers + 1; most > limit {
		t.Fatalf("%d chunks' channels held at once, want at most %d", most, limit)
	}
}
