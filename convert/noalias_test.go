package convert

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoReexports keeps convert's API its own: a second name for another
// package's type, value or function (type X = pkg.Y, var X = pkg.Y, a func
// that only passes its parameters on to pkg.F) makes two names for one thing, and callers
// then mix them. Callers use the names where the things live.
func TestNoReexports(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			for _, what := range reexports(d) {
				t.Errorf("%s: %s re-exports another package's name", fset.Position(d.Pos()), what)
			}
		}
	}
}

// reexports names the exported identifiers d declares as another package's.
func reexports(d ast.Decl) []string {
	var out []string
	switch d := d.(type) {
	case *ast.GenDecl:
		for _, s := range d.Specs {
			switch s := s.(type) {
			case *ast.TypeSpec:
				if s.Assign.IsValid() && s.Name.IsExported() && isQualified(s.Type) {
					out = append(out, s.Name.Name)
				}
			case *ast.ValueSpec:
				for i, n := range s.Names {
					if n.IsExported() && i < len(s.Values) && isQualified(s.Values[i]) {
						out = append(out, n.Name)
					}
				}
			}
		}
	case *ast.FuncDecl:
		if d.Recv != nil || !d.Name.IsExported() || d.Body == nil || len(d.Body.List) != 1 {
			break
		}
		if r, ok := d.Body.List[0].(*ast.ReturnStmt); ok && len(r.Results) == 1 {
			if c, ok := r.Results[0].(*ast.CallExpr); ok && isQualified(c.Fun) && forwards(d.Type.Params, c.Args) {
				out = append(out, d.Name.Name)
			}
		}
	}
	return out
}

// forwards reports whether args are the parameters, unchanged and in order.
func forwards(params *ast.FieldList, args []ast.Expr) bool {
	var names []string
	for _, f := range params.List {
		for _, n := range f.Names {
			names = append(names, n.Name)
		}
	}
	if len(names) != len(args) {
		return false
	}
	for i, a := range args {
		if id, ok := a.(*ast.Ident); !ok || id.Name != names[i] {
			return false
		}
	}
	return true
}

// isQualified reports whether e is pkg.Name.
func isQualified(e ast.Expr) bool {
	s, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	_, ok = s.X.(*ast.Ident)
	return ok
}
