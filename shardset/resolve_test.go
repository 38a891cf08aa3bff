package shardset

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestResolveInfo: ResolveInfo gives os.Lstat's word on the names it
// looked at (a link as a link), nil for a glob's matches and URLs, and
// the same shards as ResolveContext.
func TestResolveInfo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	os.WriteFile(a, []byte("12345"), 0o644)
	os.WriteFile(b, nil, 0o644)
	os.WriteFile(filepath.Join(dir, "c.tar"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "d.tar"), nil, 0o644)
	link := filepath.Join(dir, "l.tar")
	if err := os.Symlink(a, link); err != nil {
		t.Skip(err)
	}
	args := []string{a, link, filepath.Join(dir, "{b,d}.tar"), filepath.Join(dir, "[c]*.tar"), "https://example.com/x.tar"}
	shards, infos, err := ResolveInfo(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ResolveContext(context.Background(), args)
	if !slices.Equal(shards, want) || len(infos) != len(shards) {
		t.Fatalf("ResolveInfo %v (%d infos), ResolveContext %v", shards, len(infos), want)
	}
	if infos[0] == nil || infos[0].Size() != 5 || !infos[0].Mode().IsRegular() {
		t.Errorf("an existing file: %v", infos[0])
	}
	if infos[1] == nil || infos[1].Mode()&fs.ModeSymlink == 0 {
		t.Errorf("a link: %v, want the link's own", infos[1])
	}
	if infos[2] == nil || infos[2].Name() != "b.tar" || infos[3] == nil || infos[3].Name() != "d.tar" {
		t.Errorf("a brace pattern's names: %v, %v", infos[2], infos[3])
	}
	if infos[4] != nil || infos[5] != nil {
		t.Errorf("a glob's match and a URL: %v, %v, want nil", infos[4], infos[5])
	}
}
