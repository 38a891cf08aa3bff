package mds_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// TestTarToMDSCopiesNoPayload: from tar shards (plain files), the values
// go from the shards' pages to the MDS shards' without passing through
// buffers of the writer's: what the conversion allocates is far below
// the payload's bytes (reading them into windows took 4 MiB buffers).
func TestTarToMDSCopiesNoPayload(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	var shard formattest.Shard
	var payload int64
	for i := 0; i < 1600; i++ {
		data := make([]byte, 8<<10+r.Intn(8<<10))
		r.Read(data)
		shard = append(shard, formattest.File{Name: fmt.Sprintf("k%05d.bin", i), Data: data})
		payload += int64(len(data))
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "tar")
	convert(t, &formattest.Rows{Shards: []formattest.Shard{shard}}, "tar", src, registry.CreateOptions{Workers: 2})
	ds := open(t, "tar", src)
	out := filepath.Join(dir, "mds")
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := registry.Lookup("mds").Create(context.Background(), ds, out, registry.CreateOptions{Workers: 2}); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("%d bytes of values, %d allocated", payload, alloc)
	if alloc > payload/4 {
		t.Errorf("converting %d bytes of values allocated %d bytes, want at most %d", payload, alloc, payload/4)
	}

	// And the values are the source's.
	back := filepath.Join(dir, "back")
	convert(t, open(t, "mds", out), "tar", back, registry.CreateOptions{Workers: 1})
	got := formattest.Files(formattest.ReadSample(t, "tar", back))
	if len(got) != len(shard) {
		t.Fatalf("%d members back, want %d", len(got), len(shard))
	}
	for i := range shard {
		if got[i].Name != shard[i].Name || !bytes.Equal(got[i].Data, shard[i].Data) {
			t.Fatalf("member %d: %q, %d bytes, want %q, %d bytes", i, got[i].Name, len(got[i].Data), shard[i].Name, len(shard[i].Data))
		}
	}
}
