package pathguard

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestRegularAndOpen(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.tar")
	os.WriteFile(file, []byte("x"), 0o644)
	fifo := filepath.Join(dir, "f.tar")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
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
}
