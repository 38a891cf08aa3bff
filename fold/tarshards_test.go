package fold

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
)

// TestReleasedRowsReused: the rows of full batches go back to a pool once
// the engine releases them, and scans fill them again: with shards of
// several full batches scanned on two workers, every row still names its
// own member, in order, whatever slice it came in.
func TestReleasedRowsReused(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	want := map[int][]string{}
	for s := range 3 {
		var files [][2]string
		for i := range 2*batchRows + 17 {
			name := fmt.Sprintf("s%d/%06d.txt", s, i)
			files = append(files, [2]string{name, name[:s+1]})
			want[s] = append(want[s], name)
		}
		p := filepath.Join(dir, fmt.Sprintf("data_%d.tar", s))
		writeTarFile(t, p, files)
		paths = append(paths, p)
	}
	for run := range 2 { // the second run takes slices the first gave back
		src := NewTarShards(paths, tarfile.Options{})
		var mu sync.Mutex
		got := map[int][]string{}
		err := dataset.Run(context.Background(), src, dataset.RowFunc(func(shard int, r *dataset.Row) error {
			mu.Lock()
			got[shard] = append(got[shard], string(r.Name))
			mu.Unlock()
			return nil
		}), dataset.Options{Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		for s := range want {
			if len(got[s]) != len(want[s]) {
				t.Fatalf("run %d, shard %d: %d rows, want %d", run, s, len(got[s]), len(want[s]))
			}
			for i := range want[s] {
				if got[s][i] != want[s][i] {
					t.Fatalf("run %d, shard %d, row %d: %q, want %q", run, s, i, got[s][i], want[s][i])
				}
			}
		}
	}
}
