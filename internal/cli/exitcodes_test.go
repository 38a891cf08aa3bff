package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMissingOutputDirectory: one rule for every command: an output whose
// directory does not exist is a usage error (exit 2) naming it, and
// nothing is created; before, index -o and --out-dir exited 1 and index
// --task created the directory.
func TestMissingOutputDirectory(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	shard := filepath.Join(dir, "train_0000.tar")
	missing := filepath.Join(t.TempDir(), "missing")
	tblPath := filepath.Join(t.TempDir(), "x.tbl")
	if code, _, stderr := run(t, "convert", "-q", dir, tblPath); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"index", "-q", "-o", filepath.Join(missing, "x.taridx"), shard},
		{"index", "-q", "--out-dir", missing, dir},
		{"index", "-q", "--task", "1/2", "--out-dir", missing, dir},
		{"index", "-q", "--format", "wids", "--out-dir", missing, dir},
		{"convert", "-q", dir, filepath.Join(missing, "x.tbl")},
		{"convert", "-q", dir, filepath.Join(missing, "x.barecat")},
		{"convert", "-q", tblPath, filepath.Join(missing, "fold")},
		{"convert", "-q", "--task", "1/2", dir, filepath.Join(missing, "x.tbl")},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, missing) || !strings.Contains(stderr, "does not exist") {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
		if _, err := os.Stat(missing); err == nil {
			t.Fatalf("%q created %s", args, missing)
		}
	}
}
