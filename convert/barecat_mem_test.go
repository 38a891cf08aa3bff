package convert

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
)

// manyFiles is a source of n empty files over shards shards, their names
// made as they are scanned: no memory of its own that grows with n.
type manyFiles struct{ n, shards int }

func (m manyFiles) NumShards() int             { return m.shards }
func (m manyFiles) ShardName(shard int) string { return fmt.Sprintf("shard %d", shard) }
func (m manyFiles) Scan(ctx context.Context, shard int, emit func([]dataset.Row) error) error {
	per := m.n / m.shards
	rows := make([]dataset.Row, 0, 256)
	for i := range per {
		rows = append(rows, dataset.Row{Name: fmt.Appendf(nil, "d%02d/%08d.bin", i%64, shard*per+i), Kind: dataset.KindFile, Offset: int64(i) * 512})
		if len(rows) == cap(rows) || i == per-1 {
			if err := emit(rows); err != nil {
				return err
			}
			rows = make([]dataset.Row, 0, 256)
		}
	}
	return nil
}

// TestBarecatSinkMemory: the Go heap of a conversion to Barecat does not
// grow with the number of files by more than a few bytes each (the path
// filter), whatever the policy: no map of every path. (It grew by some
// 150 bytes a file when every path was kept in maps.)
func TestBarecatSinkMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("500k rows")
	}
	const n = 500_000
	dir := t.TempDir()
	data := filepath.Join(dir, "data.tar")
	if err := os.WriteFile(data, make([]byte, 1024), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := barecat.Create(filepath.Join(dir, "x.barecat"), barecat.WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	src := manyFiles{n: n, shards: 4}
	paths := make([]string, src.shards)
	for i := range paths {
		paths[i] = data
		if _, err := w.LinkShard(data); err != nil {
			t.Fatal(err)
		}
	}
	sink := &barecatSink{ctx: context.Background(), w: w, src: &fold.TarShards{Paths: paths}, kept: map[string]bool{},
		latest: map[string]occurrence{}, opts: BarecatOptions{Wrap: true}, stats: &BarecatStats{Skipped: map[string]int64{}}}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base, peak := ms.HeapInuse, ms.HeapInuse
	calls := 0
	err = dataset.Run(context.Background(), src, sink, dataset.Options{Workers: 2, Progress: func(dataset.Progress) {
		if calls++; calls%16 == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)
	if sink.stats.Files != n {
		t.Fatalf("%d files", sink.stats.Files)
	}
	growth := int64(peak) - int64(base)
	t.Logf("heap grew by %d bytes for %d files (%.1f bytes a file)", growth, n, float64(growth)/n)
	if limit := int64(32*n + 16<<20); growth > limit {
		t.Errorf("heap grew by %d bytes for %d files, more than %d", growth, n, limit)
	}
}
