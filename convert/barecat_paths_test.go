package convert

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/barecat"
)

// TestWrapThroughSymlinks: an archive wrapped into a directory reached
// through a symbolic link, over tars named through another link and "..",
// has shard links that lead to the tars: barecat's check passes and every
// file reads back.
func TestWrapThroughSymlinks(t *testing.T) {
	root := t.TempDir()
	dataDir, shards := sampleShards(t)
	// root/real/out is the output directory, reached as root/outlink.
	realOut := filepath.Join(root, "real", "out")
	if err := os.MkdirAll(realOut, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(realOut, filepath.Join(root, "outlink")); err != nil {
		t.Fatal(err)
	}
	// The tars, named as root/datalink/sub/../train_000N.tar, where
	// datalink leads to their directory (and sub is a directory in it).
	if err := os.Mkdir(filepath.Join(dataDir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dataDir, filepath.Join(root, "datalink")); err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, s := range shards {
		named = append(named, filepath.Join(root, "datalink", "sub")+"/../"+filepath.Base(s))
	}
	// Relative to the working directory as well: typed paths that go
	// through the links.
	wd, _ := os.Getwd()
	if err := os.Chdir(root); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	out := "outlink/w.barecat"
	st, err := TarToBarecat(context.Background(), named, out, BarecatOptions{Wrap: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 5 {
		t.Errorf("%d files, want 5", st.Files)
	}
	for i, s := range shards {
		want, _ := os.Stat(s)
		got, err := os.Stat(barecat.ShardPath(filepath.Join(realOut, "w.barecat"), i))
		if err != nil || !os.SameFile(got, want) {
			link, _ := os.Readlink(barecat.ShardPath(filepath.Join(realOut, "w.barecat"), i))
			t.Errorf("shard %d links to %q (%v), not to %s", i, link, err, s)
		}
	}
	a, err := barecat.Open(filepath.Join(realOut, "w.barecat"))
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rep, err := a.Verify(context.Background())
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	n := 0
	err = a.Files(context.Background(), barecat.ByPath, func(f barecat.File) error {
		_, err := a.ReadFile(f)
		n++
		return err
	})
	if err != nil || n != 5 {
		t.Fatalf("read %d files: %v", n, err)
	}
}

// TestTarToBarecatExisting: an existing archive is refused, naming it in
// the user's words, and Overwrite replaces it whole (a shard more of the
// old archive included).
func TestTarToBarecatExisting(t *testing.T) {
	_, shards := sampleShards(t)
	out := filepath.Join(t.TempDir(), "d.barecat")
	if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{ShardSize: 3000}); err != nil {
		t.Fatal(err)
	}
	old, _ := filepath.Glob(out + "-shard-*")
	_, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{})
	if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), out) || !strings.Contains(err.Error(), "--force") ||
		strings.Contains(err.Error(), "Options") {
		t.Fatalf("got %v, want fs.ErrExist naming %s in the user's words", err, out)
	}
	if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	now, _ := filepath.Glob(out + "-shard-*")
	if len(old) < 2 || len(now) != 1 {
		t.Errorf("shards before %v, after %v", old, now)
	}
	if got := readArchive(t, out); len(got) != 5 {
		t.Errorf("files %v", got)
	}
}
