package loaders_test

import (
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/all"
)

// TestRegistry: every loader's plug-in is registered, in the order the
// index command has always written them; a name not registered is
// ErrUnknown; Build writes a loader's indexes and Problems finds none in
// them, then what a changed shard makes of them.
func TestRegistry(t *testing.T) {
	if got := fmt.Sprint(loaders.Names()); got != "[energon wids dali ratarmount]" {
		t.Errorf("names %s", got)
	}
	if _, err := loaders.New("nosuch", loaders.Options{}); !errors.Is(err, loaders.ErrUnknown) {
		t.Errorf("New(nosuch): %v", err)
	}
	if _, err := loaders.Build(context.Background(), "nosuch", nil, ""); !errors.Is(err, loaders.ErrUnknown) {
		t.Errorf("Build(nosuch): %v", err)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second registration of dali did not panic")
			}
		}()
		loaders.Register(loaders.Lookup("dali"))
	}()

	dir := t.TempDir()
	shards := webShards(t, dir)
	outs, err := loaders.Build(context.Background(), "ratarmount", shards, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0] != shards[0]+".index.sqlite" {
		t.Fatalf("outputs %v", outs)
	}
	for _, o := range outs {
		if name, ok := loaders.Detect(o); !ok || name != "ratarmount" {
			t.Errorf("%s detected as %q %v", o, name, ok)
		}
		if probs, err := loaders.Problems(context.Background(), o); err != nil || len(probs) != 0 {
			t.Errorf("%s: problems %q, error %v", o, probs, err)
		}
	}
	testutil.WriteShard(t, shards[1], "s2.jpg", strings.Repeat("2", 700), "s2.cls", "2", "s3.jpg", "three")
	probs, err := loaders.Problems(context.Background(), outs[1])
	if err != nil || len(probs) != 2 || !strings.Contains(probs[0], `missing "s3.jpg"`) || !strings.Contains(probs[1], `stale "archive"`) {
		t.Errorf("problems of a changed shard %q, error %v", probs, err)
	}
}

// TestFoldImportsNoLoader: fold, the tar folds and TARIDX, imports no
// loader's package nor their file formats', directly or through another
// package of this module: the loaders stand above it.
func TestFoldImportsNoLoader(t *testing.T) {
	const module = "github.com/itarconv/itarconv/"
	root := filepath.Join("..")
	seen := map[string]bool{}
	var walk func(pkg string, via []string)
	walk = func(pkg string, via []string) {
		if seen[pkg] {
			return
		}
		seen[pkg] = true
		for _, bad := range []string{"loaders", "formats/dali", "formats/energon", "formats/wids", "formats/ratarmount"} {
			if pkg == bad || strings.HasPrefix(pkg, bad+"/") {
				t.Errorf("fold imports %s (through %s)", pkg, strings.Join(via, " -> "))
			}
		}
		files, _ := filepath.Glob(filepath.Join(root, filepath.FromSlash(pkg), "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, im := range af.Imports {
				path, _ := strconv.Unquote(im.Path.Value)
				if rest, ok := strings.CutPrefix(path, module); ok {
					walk(rest, append(via[:len(via):len(via)], rest))
				}
			}
		}
	}
	walk("fold", []string{"fold"})
	if len(seen) < 5 {
		t.Fatalf("only %d packages found under %s: is the test run from loaders/?", len(seen), root)
	}
}
