package safefile

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRemoveCreated: the directories a run made for a file output go
// (the output itself never being made is no stop), deepest first, while
// they are empty; what was there before stays.
func TestRemoveCreated(t *testing.T) {
	base := t.TempDir()
	out := filepath.Join(base, "a", "b", "x.tbl")
	dirs := MissingDirs(out)
	if want := []string{out, filepath.Join(base, "a", "b"), filepath.Join(base, "a")}; !slices.Equal(dirs, want) {
		t.Fatalf("MissingDirs %q, want %q", dirs, want)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	RemoveCreated(dirs)
	if names, _ := os.ReadDir(base); len(names) != 0 {
		t.Errorf("%s holds %d entries", base, len(names))
	}
	// A directory that holds something stays, and so do those above it.
	os.MkdirAll(filepath.Dir(out), 0o755)
	os.WriteFile(filepath.Join(base, "a", "b", "other"), nil, 0o644)
	RemoveCreated(dirs)
	if _, err := os.Stat(filepath.Join(base, "a", "b", "other")); err != nil {
		t.Error(err)
	}
}

// TestScratch: a scratch file is writable and readable, and has no name
// in its directory.
func TestScratch(t *testing.T) {
	dir := t.TempDir()
	f, err := Scratch(dir, "rows")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("spilled"), 3); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 7)
	if _, err := f.ReadAt(b, 3); err != nil || string(b) != "spilled" {
		t.Errorf("read back %q, %v", b, err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Errorf("%s holds %d entries", dir, len(names))
	}
}
