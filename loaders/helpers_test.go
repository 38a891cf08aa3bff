package loaders_test

import (
	"archive/tar"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// copyShards copies the tar shards of a format package's testdata case to
// a new directory, in name order.
func copyShards(t *testing.T, caseDir string) (dir string, shards []string) {
	t.Helper()
	dir = t.TempDir()
	paths, _ := filepath.Glob(filepath.Join(caseDir, "*.tar"))
	slices.Sort(paths)
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(p))
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, dst)
	}
	return dir, shards
}

// writeShard writes a tar shard of the files (name, content pairs) at path.
func writeShard(t *testing.T, path string, files ...string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for i := 0; i < len(files); i += 2 {
		h := &tar.Header{Name: files[i], Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(files[i+1])),
			ModTime: time.Unix(1700000000, 0), Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(files[i+1]))
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
