package fold

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/spool"
	"github.com/itarconv/itarconv/testing/testutil"
)

// openFDs counts this process's open descriptors (-1 where /proc has
// none).
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(ents)
}

// TestShardFileKeepsScannedFile: the payloads of a shard's batches are
// read from the file its scan read the headers from, not the path opened
// again: a file renamed over the shard's path meanwhile is not read. The
// file is closed with the shard's last batch written; a batch released
// before the scan ends leaves nothing open; Close closes what a failed
// run left.
func TestShardFileKeepsScannedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.tar")
	raw := testutil.WriteShard(t, p, "a.txt", "alpha", "b.txt", "beta")
	other := filepath.Join(dir, "other.tar")
	testutil.WriteShard(t, other, "a.txt", "ALPHA", "b.txt", "BETA")
	before := openFDs()

	sp := spool.New(dir, nil)
	defer sp.Close()
	src := NewTarShards([]string{p}, tarfile.Options{})
	src.Spool = sp
	var batches []*dataset.Batch
	err := src.Scan(context.Background(), 0, func(rows []dataset.Row) error {
		batches = append(batches, &dataset.Batch{Shard: 0, Rows: rows})
		return nil
	})
	if err != nil || len(batches) != 1 {
		t.Fatalf("Scan: %d batches, %v", len(batches), err)
	}
	if err := os.Rename(other, p); err != nil {
		t.Fatal(err)
	}
	f, err := src.ShardFile(0)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(f)
	f.Close()
	if string(got) != string(raw) || f.Name() != p {
		t.Errorf("ShardFile after the path was replaced: %d bytes named %s, want the %d scanned, named %s", len(got), f.Name(), len(raw), p)
	}
	src.Release(batches[0])
	if n := openFDs(); n != before {
		t.Errorf("%d descriptors open after the last batch was written, %d before the scan", n, before)
	}
	// Now the shard is opened anew: the path's new file.
	if f, err = src.ShardFile(0); err != nil {
		t.Fatal(err)
	}
	got, _ = io.ReadAll(f)
	f.Close()
	if string(got) == string(raw) {
		t.Error("ShardFile after the shard's batches were written read the scanned file, not the path")
	}

	// A batch written before its scan ends: nothing is kept.
	src = NewTarShards([]string{p}, tarfile.Options{})
	src.Spool = sp
	if err := src.Scan(context.Background(), 0, func(rows []dataset.Row) error {
		src.Release(&dataset.Batch{Shard: 0, Rows: rows})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(); n != before {
		t.Errorf("%d descriptors open after a scan whose batch was written, %d before", n, before)
	}

	// A run that fails before its batches are written: Close closes the
	// kept file.
	src = NewTarShards([]string{p}, tarfile.Options{})
	src.Spool = sp
	if err := src.Scan(context.Background(), 0, func([]dataset.Row) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if n := openFDs(); n != before+1 {
		t.Errorf("%d descriptors open with one shard's batches unwritten, want %d", n, before+1)
	}
	src.Close()
	if n := openFDs(); n != before {
		t.Errorf("%d descriptors open after Close, %d before", n, before)
	}
}
