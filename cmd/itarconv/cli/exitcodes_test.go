package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestShardSetUsage: what the user typed wrong in a shard set is a usage
// error (exit 2) for every command that takes one, with a short message:
// a malformed brace pattern, an @list naming a list, a 100 KB name, a
// shard given twice, an @list that is a FIFO (refused at once, not waited
// on). Before, the first three exited 1 and the FIFO blocked for ever.
func TestShardSetUsage(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	shard := filepath.Join(dir, "train_0000.tar")
	inner := filepath.Join(t.TempDir(), "inner.txt")
	os.WriteFile(inner, []byte(shard+"\n"), 0o644)
	outer := filepath.Join(t.TempDir(), "outer.txt")
	os.WriteFile(outer, []byte("@"+inner+"\n"), 0o644)
	fifo := filepath.Join(t.TempDir(), "list.fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO:", err)
	}
	long := filepath.Join(dir, strings.Repeat("x", 100<<10)+".tar")
	out := t.TempDir()
	for _, set := range [][]string{
		{filepath.Join(dir, "train_{0000..0001.tar")},
		{"@" + outer},
		{long},
		{shard, shard},
		{"@" + fifo},
	} {
		for _, cmd := range [][]string{
			{"index", "-q", "-o", filepath.Join(out, "x.taridx")},
			{"convert", "-q"},
		} {
			args := append(append(cmd, set...), filepath.Join(out, "y.tbl"))
			if cmd[0] == "index" {
				args = append(cmd, set...)
			}
			code, _, stderr := run(t, args...)
			if code != ExitUsage || len(stderr) > 1000 {
				t.Errorf("%s %.60q: exit %d, %d-byte message: %.300s", cmd[0], set, code, len(stderr), stderr)
			}
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("refused runs left %d files", len(entries))
	}
}
