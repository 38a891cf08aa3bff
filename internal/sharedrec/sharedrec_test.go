package sharedrec

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPutGet: a record reads back whole; damaged, too long, under another
// name or missing, it reads as nothing; a failed write leaves nothing.
func TestPutGet(t *testing.T) {
	dir := t.TempDir()
	Put(dir, "a", "tmp-", []byte("hello"))
	if got := Get(dir, "a", 16); string(got) != "hello" {
		t.Fatalf("Get = %q", got)
	}
	if got := Get(dir, "a", 4); got != nil {
		t.Errorf("a record longer than max: %q", got)
	}
	if got := Get(dir, "b", 16); got != nil {
		t.Errorf("a missing record: %q", got)
	}
	// The same bytes under another name: the seal covers the name.
	b, _ := os.ReadFile(filepath.Join(dir, "a"))
	os.WriteFile(filepath.Join(dir, "b"), b, 0o644)
	if got := Get(dir, "b", 16); got != nil {
		t.Errorf("a record renamed: %q", got)
	}
	b[0] ^= 1
	os.WriteFile(filepath.Join(dir, "a"), b, 0o644)
	if got := Get(dir, "a", 16); got != nil {
		t.Errorf("a damaged record: %q", got)
	}
	Put(filepath.Join(dir, "nosuch"), "c", "tmp-", []byte("x"))
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("after a failed write the directory holds %d entries", len(ents))
	}
}
