package testutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
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
