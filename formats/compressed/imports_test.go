package compressed

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoNetworking: decompression is all this package does. Fetching a
// shard from where it lives is package spool's (over package remote): no
// package this one is built from, in this module, imports remote or the
// standard library's networking.
func TestNoNetworking(t *testing.T) {
	const module = "github.com/itarconv/itarconv"
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "go.mod")); err != nil || !strings.HasPrefix(string(b), "module "+module+"\n") {
		t.Fatalf("%s is not the module's root: %v", root, err)
	}
	forbidden := func(p string) bool {
		return p == module+"/remote" || strings.HasPrefix(p, module+"/remote/") || p == module+"/spool" ||
			p == "net" || p == "net/http" || strings.HasPrefix(p, "net/http/")
	}
	seen := map[string]bool{}
	var visit func(pkg string, path []string)
	visit = func(pkg string, path []string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, module)))
		p, err := build.Default.ImportDir(dir, 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		for _, imp := range p.Imports {
			via := append(slices.Clone(path), imp)
			switch {
			case forbidden(imp):
				t.Errorf("%s imports %s: %s", pkg, imp, strings.Join(via, " -> "))
			case imp == module || strings.HasPrefix(imp, module+"/"):
				visit(imp, via)
			}
		}
	}
	visit(module+"/formats/compressed", []string{module + "/formats/compressed"})
	if len(seen) < 2 {
		t.Fatalf("only %v walked", seen)
	}
}
