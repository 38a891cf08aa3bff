package tarfile

import (
	"archive/tar"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestWalk: every member in order, and the offset of the end-of-archive
// blocks; an error of fn stops the walk.
func TestWalk(t *testing.T) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, n := range []string{"a.jpg", "a.cls"} {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: 1, Typeflag: tar.TypeReg})
		tw.Write([]byte{'x'})
	}
	tw.Close()
	path := filepath.Join(t.TempDir(), "s.tar")
	os.WriteFile(path, buf.Bytes(), 0o644)
	var names []string
	end, err := Walk(path, Options{}, func(m *Member) error {
		names = append(names, string(m.Name))
		return nil
	})
	if err != nil || end != 2048 || !reflect.DeepEqual(names, []string{"a.jpg", "a.cls"}) {
		t.Fatalf("Walk: %q, end %d, %v", names, end, err)
	}
	stop := errors.New("stop")
	if _, err := Walk(path, Options{}, func(*Member) error { return stop }); err != stop {
		t.Errorf("fn's error: %v", err)
	}
}
