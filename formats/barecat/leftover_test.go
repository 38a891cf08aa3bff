package barecat

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/safefile"
)

// A pid above Linux's largest (2^22) names no process.
const deadPID = 4194305 + 12345

// TestWriterTempNamesCarryPID: every temporary name of a write carries the
// process id, and a write sweeps the leftovers of dead processes (not those
// of a live one) before it starts.
func TestWriterTempNamesCarryPID(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "x.barecat")
	dead := []string{
		fmt.Sprintf("%s%d-x.barecat-123", safefile.TempPrefix, deadPID),
		fmt.Sprintf("%s%d-x.barecat-shard-00000-456", safefile.TempPrefix, deadPID),
		fmt.Sprintf("%s%d-y.barecat-shard-00003-789", safefile.TempPrefix, deadPID),
	}
	live := fmt.Sprintf("%s%d-x.barecat-shard-00001-abc", safefile.TempPrefix, os.Getpid())
	for _, n := range append(slices.Clone(dead), live) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("leftover"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tarFile := filepath.Join(dir, "data.tar")
	if err := os.WriteFile(tarFile, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Create(out, WriterOptions{ShardSizeLimit: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i := range 3 {
		if err := w.Add(File{Path: fmt.Sprintf("f%d.bin", i), Size: 3}, strings.NewReader("abc")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.LinkShard(tarFile); err != nil {
		t.Fatal(err)
	}
	prefix := strings.TrimSuffix(safefile.TempName("x.barecat"), "-*")
	var temps []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, safefile.TempPrefix) && n != live {
			temps = append(temps, n)
		}
	}
	// index, 3 shards written, 1 link
	if len(temps) != 5 {
		t.Fatalf("temporary files while writing: %q, want 5", temps)
	}
	for _, n := range temps {
		if !strings.HasPrefix(n, prefix) {
			t.Errorf("temporary %q does not start with %q", n, prefix)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var got []string
	entries, _ = os.ReadDir(dir)
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{live, "data.tar", "x.barecat", "x.barecat-shard-00000", "x.barecat-shard-00001",
		"x.barecat-shard-00002", "x.barecat-shard-00003"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("directory after Close:\n got %q\nwant %q", got, want)
	}
}

// TestLinkShardCheckedBeforeIndex: a shard link that no longer leads to the
// file it was made for (the tar replaced meanwhile) fails Close with
// ErrMissingShard, and no archive appears.
func TestLinkShardCheckedBeforeIndex(t *testing.T) {
	dir := t.TempDir()
	tarFile := filepath.Join(dir, "data.tar")
	if err := os.WriteFile(tarFile, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if _, err := w.LinkShard(tarFile); err != nil {
		t.Fatal(err)
	}
	if err := w.AddExternal(File{Path: "a.bin", Shard: 0, Offset: 2, Size: 3}); err != nil {
		t.Fatal(err)
	}
	// Written beside, then renamed over: another inode.
	if err := os.WriteFile(tarFile+".new", []byte("another file"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tarFile+".new", tarFile); err != nil {
		t.Fatal(err)
	}
	err = w.Close()
	wantErr(t, err, ErrMissingShard)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "data.tar" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Fatalf("left in the directory: %q", names)
	}
}

// TestWriterDuplicateFromIndex: a path repeated after thousands of others
// (its first row long handed to SQLite), a file where a directory was
// made, and a directory where a file is, are refused; AddLink finds its
// target in the batch being filled and in SQLite alike.
func TestWriterDuplicateFromIndex(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	if err := w.Add(File{Path: "d/first.bin", Size: 5}, strings.NewReader("first")); err != nil {
		t.Fatal(err)
	}
	for i := range 5000 {
		if err := w.Add(File{Path: fmt.Sprintf("f/%05d", i), Size: 1}, strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, w.Add(File{Path: "./d//first.bin", Size: 1}, strings.NewReader("y")), ErrDuplicate)
	wantErr(t, w.Add(File{Path: "f", Size: 1}, strings.NewReader("y")), ErrConflict)
	wantErr(t, w.Add(File{Path: "d/first.bin/x", Size: 1}, strings.NewReader("y")), ErrConflict)
	wantErr(t, w.AddDir(Dir{Path: "f/00017"}), ErrConflict)
	if n, err := w.AddLink(File{Path: "l1"}, "d/first.bin"); err != nil || n != 5 {
		t.Fatalf("AddLink from SQLite: %d, %v", n, err)
	}
	if n, err := w.AddLink(File{Path: "l2"}, "l1"); err != nil || n != 5 {
		t.Fatalf("AddLink from the batch: %d, %v", n, err)
	}
	if _, err := w.AddLink(File{Path: "l3"}, "nothing"); !errors.Is(err, ErrMissingFile) {
		t.Fatalf("AddLink to nothing: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, out)
	defer a.Close()
	for _, p := range []string{"l1", "l2", "d/first.bin"} {
		f, err := a.Lookup(p)
		if err != nil {
			t.Fatal(err)
		}
		if b := readAll(t, a, f); string(b) != "first" {
			t.Errorf("%s: %q", p, b)
		}
	}
	if n, _ := a.NumFiles(); n != 5003 {
		t.Errorf("%d files, want 5003", n)
	}
}
