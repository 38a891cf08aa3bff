package docs

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/itarconv/itarconv"

// pkg is one package of the module: its directory (slash-separated,
// relative to the module root) and what its non-test files import from
// the module.
type pkg struct {
	dir     string
	imports map[string]bool // module-relative directories
	hasDoc  bool            // a doc.go with the package comment
}

func root(t *testing.T) string {
	t.Helper()
	r, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(r, "go.mod")); err != nil {
		t.Fatalf("no go.mod above docs/: %v", err)
	}
	return r
}

// packages reads every package of the module: the imports of its non-test
// files, and whether it has a doc.go with a package comment.
func packages(t *testing.T) map[string]*pkg {
	t.Helper()
	r := root(t)
	out := map[string]*pkg{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(r, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != r && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(r, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		p := out[rel]
		if p == nil {
			p = &pkg{dir: rel, imports: map[string]bool{}}
			out[rel] = p
		}
		if strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly|parser.ParseComments)
		if err != nil {
			return err
		}
		if filepath.Base(path) == "doc.go" && f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != "" {
			p.hasDoc = true
		}
		for _, im := range f.Imports {
			ip, _ := strconv.Unquote(im.Path.Value)
			if dep, ok := strings.CutPrefix(ip, module+"/"); ok {
				p.imports[dep] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func under(dir, prefix string) bool { return dir == prefix || strings.HasPrefix(dir, prefix+"/") }

// TestLayers: the package tree is the architecture. Each rule names what
// a layer must not import (in non-test files).
func TestLayers(t *testing.T) {
	pkgs := packages(t)
	var dirs []string
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	isTestHelper := func(d string) bool { return under(d, "testing") || under(d, "bench") || d == "docs" }
	for _, d := range dirs {
		p := pkgs[d]
		for dep := range p.imports {
			switch {
			case !isTestHelper(d) && isTestHelper(dep):
				t.Errorf("%s imports %s: product code imports no test helper or benchmark", d, dep)
			case under(d, "formats") && (under(dep, "remote") || under(dep, "fold") || under(dep, "convert") ||
				under(dep, "partition") || under(dep, "shardset") || under(dep, "cmd")):
				if allowed[d+" -> "+dep] == "" {
					t.Errorf("%s imports %s: a format knows its bytes on disk only (no networking, no other format's joins, no command line)", d, dep)
				}
			case under(d, "internal") && !under(dep, "internal"):
				t.Errorf("%s imports %s: internal/ is the floor, it imports only other internal/ packages", d, dep)
			case d == "dataset" && !under(dep, "internal"):
				t.Errorf("dataset imports %s: the row model knows no format", dep)
			case !under(d, "cmd") && under(dep, "cmd"):
				t.Errorf("%s imports %s: nothing imports the command line", d, dep)
			}
		}
	}
	for rule, why := range allowed {
		d, dep, _ := strings.Cut(rule, " -> ")
		if p := pkgs[d]; p == nil || !p.imports[dep] {
			t.Errorf("allowed %q (%s) no longer holds: remove it from the list", rule, why)
		}
	}
}

// allowed are the imports the rules above refuse that stand for now, each
// with why.
var allowed = map[string]string{}

// TestPackageDocs: every package says, in its doc.go, what it is for.
func TestPackageDocs(t *testing.T) {
	for d, p := range packages(t) {
		if !p.hasDoc {
			t.Errorf("%s: no doc.go with a package comment", d)
		}
	}
}

// pathRef is what ARCHITECTURE.md writes as a path of the tree: a word in
// backquotes that starts at one of the tree's top folders and ends in /
// (a directory) or .go.
var pathRef = regexp.MustCompile("`((?:bench|cmd|convert|dataset|docs|examples|fold|formats|internal|partition|remote|shardset|testing)(?:/[a-z0-9_.]+)*(?:/|\\.go))`")

// TestArchitectureCitesRealPaths: every directory and file that
// ARCHITECTURE.md names exists.
func TestArchitectureCitesRealPaths(t *testing.T) {
	r := root(t)
	b, err := os.ReadFile(filepath.Join(r, "docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, m := range pathRef.FindAllStringSubmatch(string(b), -1) {
		n++
		if _, err := os.Stat(filepath.Join(r, filepath.FromSlash(m[1]))); err != nil {
			t.Errorf("ARCHITECTURE.md names %s, which does not exist", m[1])
		}
	}
	if n < 10 {
		t.Errorf("ARCHITECTURE.md names %d paths in backquotes; the map should name its packages", n)
	}
}

// TestCLINamesNoFormat: the command line knows formats and loaders only
// through their registries: no string of a format's or a loader's name in
// its code (its help text may name them in prose).
func TestCLINamesNoFormat(t *testing.T) {
	r := root(t)
	name := regexp.MustCompile(`"(barecat|tbl|scdl|tar|taridx|energon|wids|dali|ratarmount)"`)
	files, _ := filepath.Glob(filepath.Join(r, "cmd", "itarconv", "cli", "*.go"))
	if len(files) == 0 {
		t.Fatal("no files in cmd/itarconv/cli")
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			if m := name.FindString(line); m != "" {
				t.Errorf("%s:%d: %s: the command line names a format; ask the registry", filepath.Base(f), i+1, m)
			}
		}
	}
}
