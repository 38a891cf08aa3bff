package testutil

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// conformanceHome is the package whose testdata/conformance holds each
// set of conformance files: the package of the format they exercise.
var conformanceHome = map[string]string{
	"taridx":           "formats/taridx",
	"taridx-synthetic": "formats/taridx",
	"tbl":              "formats/tbl",
	"scdl":             "formats/scdl",
	"barecat":          "formats/barecat",
}

// Conformance returns the directory of one set of conformance files
// ("taridx", "taridx-synthetic", "tbl", "scdl" or "barecat"), the files the
// reference implementations wrote. They live in the testdata/ of the
// format's package, so that tests of any package of a fresh clone find them.
func Conformance(t testing.TB, set string) string {
	t.Helper()
	home, ok := conformanceHome[set]
	if !ok {
		t.Fatalf("no conformance set %q", set)
	}
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, filepath.FromSlash(home), "testdata", "conformance", set)
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("conformance set %s: %v", set, err)
	}
	return dir
}

// ModuleRoot returns the directory holding go.mod, found upwards from the
// working directory (a test's is its package's directory).
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

// NeedTool returns the path of an external program the test needs. It
// skips the test when the program is missing, except under CI, whose setup
// installs every such tool.
func NeedTool(t testing.TB, name string) string {
	p, err := execLookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s is not installed (.ci/run installs it)", name)
		}
		t.Skipf("%s is not installed", name)
	}
	return p
}

// PlainData is a stand-in for a tar stream, n bytes long: varied enough to
// compress into several blocks, the same bytes every time.
func PlainData(n int) []byte {
	b := make([]byte, n)
	x := uint32(7)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = "abcdefgh\x00tar"[x>>28%12]
	}
	return b
}

// CompressWith runs a codec's own command line tool (gzip, zstd, bzip2,
// xz) over data, as users make their shards.
func CompressWith(t testing.TB, tool string, data []byte) []byte {
	t.Helper()
	cmd := exec.Command(tool, "-1", "-c")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return out
}

// CopyShards copies the tar shards of a testdata case to a new directory,
// in name order, and returns it and the copies: tests never write into
// testdata.
func CopyShards(t testing.TB, caseDir string) (dir string, shards []string) {
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

// WriteShard writes a tar shard of regular files (name, body, name, body,
// ...) in ustar format, at path unless path is "", and returns its bytes.
func WriteShard(t testing.TB, path string, files ...string) []byte {
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
	if path != "" {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// SourceFile writes size zero bytes at dir/name and opens the file for
// reading (closed when the test ends): a source for tests that map it and
// then cut it short.
func SourceFile(t testing.TB, dir, name string, size int) (string, *os.File) {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, make([]byte, size), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return path, f
}

// EachTarMember calls fn with every member of the tar files, in order:
// its header and its payload, as archive/tar reads them.
func EachTarMember(t testing.TB, paths []string, fn func(h *tar.Header, body []byte)) {
	t.Helper()
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(f)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				t.Fatalf("%s: %v", p, err)
			}
			b, err := io.ReadAll(tr)
			if err != nil {
				f.Close()
				t.Fatalf("%s: %s: %v", p, h.Name, err)
			}
			fn(h, b)
		}
		f.Close()
	}
}
