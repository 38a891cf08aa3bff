package pathguard

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// fileAndFIFO makes a regular file and a FIFO in a new directory.
func fileAndFIFO(t *testing.T) (dir, file, fifo string) {
	t.Helper()
	dir = t.TempDir()
	file = filepath.Join(dir, "a.tar")
	os.WriteFile(file, []byte("x"), 0o644)
	fifo = filepath.Join(dir, "f.tar")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	return dir, file, fifo
}

func TestRegularAndOpen(t *testing.T) {
	dir, file, fifo := fileAndFIFO(t)
	link := filepath.Join(dir, "l.tar")
	os.Symlink(fifo, link)
	for _, c := range []struct {
		path string
		want error
	}{
		{file, nil},
		{fifo, ErrNotRegular},
		{link, ErrNotRegular}, // followed
		{dir, ErrNotRegular},
		{filepath.Join(dir, "missing"), os.ErrNotExist},
	} {
		if _, err := Regular(c.path); !errors.Is(err, c.want) {
			t.Errorf("Regular(%s) = %v, want %v", c.path, err, c.want)
		}
		f, err := Open(c.path) // never blocks: the FIFO is refused before opening
		if !errors.Is(err, c.want) {
			t.Errorf("Open(%s) = %v, want %v", c.path, err, c.want)
		}
		if f != nil {
			f.Close()
		}
	}
}

// TestOpenRegular: Open's open of a path already stat'ed takes the stat:
// one that says FIFO is refused without an open; one that says regular of
// a path that is a FIFO now (swapped in since) is refused once open,
// without blocking.
func TestOpenRegular(t *testing.T) {
	_, file, fifo := fileAndFIFO(t)
	regular, _ := os.Stat(file)
	fifoStat, _ := os.Stat(fifo)
	f, err := openRegular(file, regular)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := openRegular(file, fifoStat); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a FIFO") {
		t.Errorf("a FIFO's stat: %v, want ErrNotRegular", err)
	}
	if _, err := openRegular(fifo, regular); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
		t.Errorf("a FIFO said regular: %v, want ErrNotRegular naming it", err)
	}
}

func TestInputs(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("a"), 0o644)
	os.WriteFile(b, []byte("b"), 0o644)
	os.Symlink(a, filepath.Join(dir, "sym"))
	os.Link(a, filepath.Join(dir, "hard"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	var in Inputs
	if err := in.Add(a); err != nil {
		t.Fatal(err)
	}
	if err := in.Add(b); err != nil {
		t.Fatal(err)
	}
	for _, same := range []string{a, filepath.Join(dir, "sub", "..", "a"), filepath.Join(dir, "sym"), filepath.Join(dir, "hard")} {
		if err := in.Add(same); !errors.Is(err, ErrSameInput) {
			t.Errorf("Add(%s) = %v, want ErrSameInput", same, err)
		}
		if err := in.CheckOutputs(filepath.Join(dir, "new"), same); !errors.Is(err, ErrOutputIsInput) {
			t.Errorf("CheckOutputs(%s) = %v, want ErrOutputIsInput", same, err)
		}
	}
	if err := in.CheckOutputs(filepath.Join(dir, "new"), filepath.Join(dir, "sub")); err != nil {
		t.Errorf("new file and a directory: %v", err)
	}
	if in.Len() != 2 {
		t.Errorf("%d inputs, want 2", in.Len())
	}
	// AddStat: what AddRegular does, from the caller's stat.
	hard, _ := os.Stat(filepath.Join(dir, "hard"))
	if err := in.AddStat(filepath.Join(dir, "hard"), hard); !errors.Is(err, ErrSameInput) {
		t.Errorf("AddStat of a link to an input: %v, want ErrSameInput", err)
	}
	sub, _ := os.Stat(filepath.Join(dir, "sub"))
	if err := in.AddStat(filepath.Join(dir, "sub"), sub); !errors.Is(err, ErrNotRegular) {
		t.Errorf("AddStat of a directory: %v, want ErrNotRegular", err)
	}
	c := filepath.Join(dir, "c")
	os.WriteFile(c, nil, 0o644)
	fc, _ := os.Stat(c)
	if err := in.AddStat(c, fc); err != nil || in.Len() != 3 {
		t.Errorf("AddStat of a new file: %v (%d inputs)", err, in.Len())
	}
}

// TestCheckName: a name no file can have is refused before any system
// call, with a message that cuts it.
func TestCheckName(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		path string
		ok   bool
	}{
		{filepath.Join(dir, "a.tar"), true},
		{filepath.Join(dir, strings.Repeat("x", MaxElement)), true},
		{filepath.Join(dir, strings.Repeat("x", MaxElement+1)), false},
		{strings.Repeat("d/", MaxPath/2-1) + "x", true},
		{strings.Repeat("d/", MaxPath/2) + "xy", false},
		{strings.Repeat("x", 100<<10), false},
	} {
		err := CheckName(c.path)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrNameTooLong) {
			t.Errorf("CheckName(%d bytes) = %v, want ok %v", len(c.path), err, c.ok)
		}
		if err != nil && len(err.Error()) > 1000 {
			t.Errorf("a message of %d bytes", len(err.Error()))
		}
	}
	huge := filepath.Join(dir, strings.Repeat("y", 100<<10))
	var in Inputs
	for _, err := range []error{
		func() error { _, err := Regular(huge); return err }(),
		func() error { _, err := Open(huge); return err }(),
		in.Add(huge),
		in.AddRegular(huge),
	} {
		if !errors.Is(err, ErrNameTooLong) || len(err.Error()) > 1000 {
			t.Errorf("a 100 KB name: %.200v", err)
		}
	}
}

// TestInputsMany: inputs are found by identity through a map, not by
// comparing each new file with every one before (quadratic at millions
// of shards).
func TestInputsMany(t *testing.T) {
	dir := t.TempDir()
	var in Inputs
	for i := range 2000 {
		p := filepath.Join(dir, fmt.Sprint(i))
		os.WriteFile(p, nil, 0o644)
		if err := in.AddRegular(p); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := identity(mustStat(t, dir)); ok && (len(in.ids) != 2000 || len(in.other) != 0) {
		t.Errorf("%d identities in the map, %d compared one by one", len(in.ids), len(in.other))
	}
	if err := in.Add(filepath.Join(dir, "1999")); !errors.Is(err, ErrSameInput) {
		t.Errorf("again: %v", err)
	}
	if in.Len() != 2000 {
		t.Errorf("%d inputs", in.Len())
	}
}

func mustStat(t *testing.T, p string) os.FileInfo {
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
