package main

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestBinaryDeps: the itarconv binary links no development or test code:
// not the benchmarks under bench/, not the test helpers (testutil), not the
// test servers (netproxy, s3server). "itarconv bench" is a product feature
// for that reason: its engine is formatcompare, which imports none of them.
func TestBinaryDeps(t *testing.T) {
	goTool, err := exec.LookPath("go") // go test puts GOROOT/bin first on PATH
	if err != nil {
		t.Skip("no go command to list the binary's packages")
	}
	cmd := exec.Command(goTool, "list", "-deps", "-f", `{{.ImportPath}} {{join .Imports " "}}`, ".")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list -deps: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/itarconv/itarconv/"
	forbidden := func(pkg string) bool {
		rest, ok := strings.CutPrefix(pkg, module)
		if !ok {
			return false
		}
		return slices.ContainsFunc(strings.Split(rest, "/"), func(elem string) bool {
			return slices.Contains([]string{"bench", "testutil", "netproxy", "s3server"}, elem)
		})
	}
	ours := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if strings.HasPrefix(pkg, module) {
			ours++
		}
		for _, imp := range strings.Fields(imports) {
			if forbidden(imp) {
				t.Errorf("the itarconv binary links %s (imported by %s)", imp, pkg)
			}
		}
	}
	// The list must be the binary's: main, the CLI and the library.
	if ours < 10 {
		t.Fatalf("go list -deps named %d packages of the module, want the binary's:\n%s", ours, out)
	}
}
