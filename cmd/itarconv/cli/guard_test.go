package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sums reads every regular file of dir, to show later that nothing changed.
func sums(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[e.Name()] = b
		}
	}
	return out
}

func sameSums(t *testing.T, dir string, before map[string][]byte) {
	t.Helper()
	after := sums(t, dir)
	if len(after) != len(before) {
		t.Errorf("%s: %d files, was %d", dir, len(after), len(before))
	}
	for name, b := range before {
		if !bytes.Equal(after[name], b) {
			t.Errorf("%s/%s changed", dir, name)
		}
	}
}

// TestOutputIsInput: an output that is an input, under any name, is
// refused with exit 2 before anything is written.
func TestOutputIsInput(t *testing.T) {
	dir := copyCase(t, "ustar_basic")
	shard := filepath.Join(dir, "train_0000.tar")
	os.Symlink(shard, filepath.Join(dir, "link.tar"))
	os.Link(shard, filepath.Join(dir, "hard.tar"))
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o755)
	before := sums(t, dir)
	for _, args := range [][]string{
		{"index", shard, "-o", shard},
		{"index", shard, "-o", filepath.Join(dir, "link.tar")},
		{"index", shard, "-o", filepath.Join(sub, "..", "train_0000.tar")},
		{"index", shard, "-o", filepath.Join(dir, "hard.tar")},
		{"convert", shard, shard},
		{"convert", shard, filepath.Join(dir, "link.tar")},
		{"convert", shard, filepath.Join(dir, "link.tar") + ".tbl"},
	} {
		if args[0] == "convert" && strings.HasSuffix(args[2], ".tbl") {
			os.Symlink(shard, args[2]) // a .tbl name that is the input
		}
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "the output would replace an input") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	os.Remove(filepath.Join(dir, "link.tar.tbl"))
	sameSums(t, dir, before)
	if _, err := os.Stat(filepath.Join(dir, "train.taridx")); err == nil {
		t.Error("an index was written")
	}
}

// TestWrappedBarecatOverItsTars: converting a --wrap archive back into the
// directory of the tars its shards link to would replace them: refused,
// and the archive still verifies.
func TestWrappedBarecatOverItsTars(t *testing.T) {
	dir := copyCase(t, "ustar_basic")
	w := filepath.Join(t.TempDir(), "w.barecat")
	if code, _, stderr := run(t, "convert", "-q", "--wrap", "--fold", "train", dir, w); code != 0 {
		t.Fatalf("wrap: exit %d: %s", code, stderr)
	}
	before := sums(t, dir)
	wb, _ := os.ReadFile(w)
	for _, args := range [][]string{
		{"convert", "-q", w, dir},
		{"convert", "-q", "--force", w, dir},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "the output would replace an input") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	sameSums(t, dir, before)
	if wa, _ := os.ReadFile(w); !bytes.Equal(wa, wb) {
		t.Error("the archive's index changed")
	}
	if code, stdout, stderr := run(t, "verify", w); code != 0 {
		t.Errorf("verify after the refused run: exit %d: %s%s", code, stdout, stderr)
	}
	// Into another directory it converts.
	if code, _, stderr := run(t, "convert", "-q", w, filepath.Join(t.TempDir(), "out")); code != 0 {
		t.Errorf("convert elsewhere: exit %d: %s", code, stderr)
	}
}

// TestSameShardTwice: one shard given twice, under any name, is refused
// (exit 2), naming it.
func TestSameShardTwice(t *testing.T) {
	dir := copyCase(t, "ustar_basic")
	a := filepath.Join(dir, "train_0000.tar")
	os.Symlink(a, filepath.Join(dir, "l.tar"))
	os.Link(a, filepath.Join(dir, "h.tar"))
	out := t.TempDir()
	for _, args := range [][]string{
		{"index", a, filepath.Join(dir, ".", "train_0000.tar"), "-o", filepath.Join(out, "x.taridx")},
		{"index", a, filepath.Join(dir, "l.tar"), "-o", filepath.Join(out, "x.taridx")},
		{"convert", a, filepath.Join(dir, "h.tar"), filepath.Join(out, "x.tbl")},
		{"convert", a, a, filepath.Join(out, "x.barecat")},
	} {
		code, _, stderr := run(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, "the same file is given twice") || !strings.Contains(stderr, "train_0000.tar") {
			t.Errorf("%v: exit %d, %q", args, code, stderr)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("%d files written", len(entries))
	}
	// Hard links between shards of a directory are one shard twice too.
	if code, _, stderr := run(t, "convert", dir, filepath.Join(out, "y.tbl")); code != ExitUsage {
		t.Errorf("directory with a hard-linked shard: exit %d, %q", code, stderr)
	}
}

// TestFIFOInput: a FIFO given or found as an input is refused without
// being opened; the command ends at once instead of blocking.
func TestFIFOInput(t *testing.T) {
	dir := copyCase(t, "ustar_basic")
	fifo := filepath.Join(dir, "train_0002.tar")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	lone := filepath.Join(t.TempDir(), "x.tbl")
	if err := syscall.Mkfifo(lone, 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"index", fifo, "-o", filepath.Join(out, "x.taridx")}, ExitUsage},
		{[]string{"index", dir}, ExitData},
		{[]string{"convert", fifo, filepath.Join(out, "a.tbl")}, ExitUsage},
		{[]string{"convert", filepath.Join(dir, "train_0000.tar"), fifo, filepath.Join(out, "d.tbl")}, ExitUsage}, // several shards: not probed for a format
		{[]string{"convert", "--fold", "train", dir, filepath.Join(out, "b.tbl")}, ExitData},
		{[]string{"convert", lone, filepath.Join(out, "c")}, ExitUsage},
		{[]string{"inspect", lone}, ExitData},
		{[]string{"verify", lone}, ExitData},
	} {
		done := make(chan struct{})
		var code int
		var stderr string
		go func() {
			code, _, stderr = run(t, c.args...)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			// Unblock the open so the goroutine ends, then fail.
			for _, p := range []string{fifo, lone} {
				if f, err := os.OpenFile(p, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					f.Close()
				}
			}
			t.Fatalf("%v blocked on a FIFO", c.args)
		}
		if code != c.code || !strings.Contains(stderr, "not a regular file") || !strings.Contains(stderr, "a FIFO") {
			t.Errorf("%v: exit %d (want %d), %q", c.args, code, c.code, stderr)
		}
	}
}
