//go:build unix

package pathguard

import (
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestReadFile: ReadFile reads a regular file whole, and refuses anything
// else at once, with a message that names the path and says what it is
// (a FIFO is never opened, so the read cannot block).
func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.json")
	if err := os.WriteFile(file, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(file); err != nil || string(b) != `{"a":1}` {
		t.Errorf("ReadFile(file) = %q, %v", b, err)
	}
	fifo := filepath.Join(dir, "f")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// A socket's path must be short: put it in a short directory.
	sdir, err := os.MkdirTemp("", "pg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sdir) })
	sock := filepath.Join(sdir, "s")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Skipf("unix socket: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	cases := []struct{ path, want string }{
		{fifo, fifo + ": not a regular file (a FIFO)"},
		{dir, dir + ": not a regular file (a directory)"},
		{sock, sock + ": not a regular file (a socket)"},
	}
	if fi, err := os.Stat("/dev/null"); err == nil && fi.Mode()&fs.ModeDevice != 0 {
		cases = append(cases, struct{ path, want string }{"/dev/null", "/dev/null: not a regular file (a device)"})
	}
	for _, c := range cases {
		done := make(chan error, 1)
		go func() {
			_, err := ReadFile(c.path)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, ErrNotRegular) || err.Error() != c.want {
				t.Errorf("ReadFile(%s) = %v, want %q", c.path, err, c.want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("ReadFile(%s) blocks", c.path)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadFile(missing) = %v", err)
	}
	if got := kind(fs.ModeIrregular); got != "not a regular file" {
		t.Errorf("kind(irregular) = %q", got)
	}
}

// bareInfo is a FileInfo without a system identity (no Stat_t), as on
// systems where Inputs compares files one by one with os.SameFile.
type bareInfo struct{ name string }

func (b bareInfo) Name() string       { return b.name }
func (b bareInfo) Size() int64        { return 0 }
func (b bareInfo) Mode() fs.FileMode  { return 0 }
func (b bareInfo) ModTime() time.Time { return time.Time{} }
func (b bareInfo) IsDir() bool        { return false }
func (b bareInfo) Sys() any           { return nil }

// TestInputsWithoutIdentity: files without an identity are kept apart
// from those with one and compared with os.SameFile, which tells two such
// files apart; a file with an identity is still found by it.
func TestInputsWithoutIdentity(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	os.WriteFile(a, nil, 0o644)
	var in Inputs
	if err := in.add("x", bareInfo{"x"}); err != nil {
		t.Fatal(err)
	}
	if err := in.add("y", bareInfo{"y"}); err != nil {
		t.Errorf("a second file without identity: %v", err)
	}
	if err := in.Add(a); err != nil {
		t.Fatal(err)
	}
	if in.Len() != 3 || len(in.other) != 2 || len(in.ids) != 1 {
		t.Errorf("%d inputs, %d without identity, %d with", in.Len(), len(in.other), len(in.ids))
	}
	if _, ok := in.find(bareInfo{"z"}); ok {
		t.Error("a file without identity found among others")
	}
	if err := in.Add(a); !errors.Is(err, ErrSameInput) {
		t.Errorf("a again: %v", err)
	}
	if err := in.CheckOutputs(a); !errors.Is(err, ErrOutputIsInput) || err.Error() != a+": "+ErrOutputIsInput.Error() {
		t.Errorf("CheckOutputs(a) = %v", err)
	}
}
