package mds_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// TestShardsFreePreallocated: shards are preallocated as they open (up to
// their size limit: here 8 MiB for 1.5 MiB) and take no more disk than
// their bytes once complete.
func TestShardsFreePreallocated(t *testing.T) {
	var shard formattest.Shard
	for i := range 150 {
		shard = append(shard, formattest.File{Name: fmt.Sprintf("k%04d.bin", i), Data: make([]byte, 10<<10)})
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "mds")
	convert(t, &formattest.Rows{Shards: []formattest.Shard{shard}}, "mds", out, registry.CreateOptions{ShardSize: 8 << 20})
	names, err := filepath.Glob(filepath.Join(out, "shard.*.mds"))
	if err != nil || len(names) == 0 {
		t.Fatalf("shards %q, %v", names, err)
	}
	for _, name := range names {
		fi, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		used := fi.Sys().(*syscall.Stat_t).Blocks * 512
		if max := (fi.Size() + 64<<10) &^ (64<<10 - 1); used > max {
			t.Errorf("%s: %d bytes take %d bytes of disk", filepath.Base(name), fi.Size(), used)
		}
	}
}
