package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMissingOutputDirectory: one rule for every command: the directory
// an output goes into is made, parents too, and what the run made is
// removed when it fails. (Before, commands refused it, with exit 1 or 2,
// while index --task made it.)
func TestMissingOutputDirectory(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	shard := filepath.Join(dir, "train_0000.tar")
	tblPath := filepath.Join(t.TempDir(), "x.tbl")
	if code, _, stderr := run(t, "convert", "-q", dir, tblPath); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	for i, c := range []struct {
		args func(missing string) []string
		out  string // what the run leaves under missing
	}{
		{func(m string) []string { return []string{"index", "-q", "-o", filepath.Join(m, "x.taridx"), shard} }, "x.taridx"},
		{func(m string) []string { return []string{"index", "-q", "--out-dir", m, dir} }, "train.taridx"},
		{func(m string) []string { return []string{"index", "-q", "--task", "1/2", "--out-dir", m, dir} }, ".train.taridx.parts"},
		{func(m string) []string { return []string{"index", "-q", "--format", "wids", "--out-dir", m, dir} }, "shardindex.json"},
		{func(m string) []string { return []string{"convert", "-q", dir, filepath.Join(m, "x.tbl")} }, "x.tbl"},
		{func(m string) []string { return []string{"convert", "-q", dir, filepath.Join(m, "x.barecat")} }, "x.barecat"},
		{func(m string) []string { return []string{"convert", "-q", tblPath, filepath.Join(m, "fold")} }, "fold"},
		{func(m string) []string {
			return []string{"convert", "-q", "--task", "1/2", dir, filepath.Join(m, "x.tbl")}
		}, ".x.tbl.parts"},
	} {
		missing := filepath.Join(t.TempDir(), "a", "b")
		args := c.args(missing)
		if code, _, stderr := run(t, args...); code != 0 {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
		if _, err := os.Stat(filepath.Join(missing, c.out)); err != nil {
			t.Errorf("case %d: %q: %v", i, args, err)
		}
	}
	// A run that fails removes the directories it made.
	top := filepath.Join(t.TempDir(), "a")
	bad := filepath.Join(t.TempDir(), "bad.tar")
	os.WriteFile(bad, []byte("not a tar archive, but long enough to be read as one block or so"), 0o644)
	for _, args := range [][]string{
		{"index", "-q", "--out-dir", filepath.Join(top, "b"), bad},
		{"convert", "-q", bad, filepath.Join(top, "b", "x.tbl")},
		{"convert", "-q", bad, filepath.Join(top, "b", "fold")},
	} {
		if code, _, _ := run(t, args...); code == 0 {
			t.Errorf("%q succeeded", args)
		}
		if _, err := os.Stat(top); err == nil {
			t.Errorf("%q left %s", args, top)
		}
	}
	// A file where a directory must go is an error naming it.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o644)
	if code, _, stderr := run(t, "index", "-q", "--out-dir", filepath.Join(file, "sub"), dir); code == 0 || !strings.Contains(stderr, file) {
		t.Errorf("a file in the way: exit %d: %s", code, stderr)
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
