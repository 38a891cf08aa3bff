// Package testutil finds the shared conformance files for tests, and makes
// the stand-ins tests and benchmarks need.
package testutil

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedDir returns the shared/ directory that stands beside the module
// root (or $ITARCONV_SHARED). Without it the test is skipped, except under
// CI, where it must be there.
func SharedDir(t testing.TB) string {
	if d := os.Getenv("ITARCONV_SHARED"); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			shared := filepath.Join(filepath.Dir(dir), "shared")
			if _, err := os.Stat(filepath.Join(shared, "conformance")); err == nil {
				return shared
			}
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	if os.Getenv("CI") != "" {
		t.Fatal("shared/conformance not found beside the module root")
	}
	t.Skip("shared/conformance not found beside the module root")
	return ""
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
