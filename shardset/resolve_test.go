package shardset

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/itarconv/itarconv/internal/pathguard"
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

// TestResolveKnown: an argument the caller stat'ed is taken as it said,
// not stat'ed again (a name no file has resolves, with the caller's
// info); one it did not is resolved as ResolveInfo resolves it, and a
// shard given twice is refused all the same.
func TestResolveKnown(t *testing.T) {
	dir := t.TempDir()
	a, gone := filepath.Join(dir, "a.tar"), filepath.Join(dir, "gone.tar")
	os.WriteFile(a, []byte("12345"), 0o644)
	os.WriteFile(gone, []byte("1234567"), 0o644)
	fiGone, err := os.Lstat(gone)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(gone)
	list := filepath.Join(dir, "list")
	os.WriteFile(list, []byte("a.tar\n"), 0o644)
	shards, infos, err := ResolveKnown(context.Background(), []string{gone, "@" + list}, []fs.FileInfo{fiGone, nil})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shards, []string{gone, a}) || infos[0] != fiGone || infos[1] == nil || infos[1].Size() != 5 {
		t.Errorf("ResolveKnown = %v, %v; want the known name with its info, then the list's shard stat'ed", shards, infos)
	}
	_, _, err = ResolveKnown(context.Background(), []string{a, a}, []fs.FileInfo{infos[1], infos[1]})
	if !errors.Is(err, pathguard.ErrSameInput) {
		t.Errorf("a known shard given twice: %v, want pathguard.ErrSameInput", err)
	}
}
