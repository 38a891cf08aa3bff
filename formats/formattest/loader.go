package formattest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// Loader says how to run the suite on another data loader's index of tar
// shards (DALI, energon, wids, ratarmount): how to build one, tell one,
// and check one against its shards. The functions are those of the
// package that writes the indexes (loaders), handed in so that this
// package imports none above formats/.
type Loader struct {
	// Name is the loader's name, as Detect returns it.
	Name string
	// Build writes the loader's index of the shards (one fold, in order)
	// beside them, and returns the files it wrote.
	Build func(ctx context.Context, shards []string) ([]string, error)
	// Detect tells whether path (a file or directory) is a loader's
	// index, and whose.
	Detect func(path string) (loader string, ok bool)
	// Check checks the index at path against the shards it names: what
	// disagrees, or an error for what could not be checked.
	Check func(ctx context.Context, path string) (problems []string, err error)
	// Unchecked says why a flipped byte of the index may go unseen (an
	// SQLite page), where it may: the damage check then asks only that no
	// check panics or hangs.
	Unchecked string
	// Skip names cases to skip, as Format.Skip does, with why.
	Skip map[string]string
}

// LoaderChecks are the loader suite's checks, by the names of their
// subtests.
var LoaderChecks = []string{"build", "detect", "verify", "damaged", "fifo", "cancel"}

// RunLoader runs every loader check on l, each in a subtest, over a small
// fold of tar shards written for it.
func RunLoader(t *testing.T, l Loader) {
	t.Helper()
	runLoader(t, l)
}

func runLoader(t testing.TB, l Loader) {
	if l.Name == "" || l.Build == nil || l.Detect == nil || l.Check == nil {
		t.Fatal("formattest.Loader needs a Name, Build, Detect and Check")
	}
	s := &loaderSuite{Loader: l, root: t.Name()}
	for _, name := range LoaderChecks {
		s.sub(t, name, func(t testing.TB) { s.check(t, name) })
	}
}

type loaderSuite struct {
	Loader
	root string
}

func (s *loaderSuite) sub(t testing.TB, name string, fn func(t testing.TB)) {
	t.Helper()
	subtest(t, s.root, s.Skip, name, fn)
}

func (s *loaderSuite) check(t testing.TB, name string) {
	switch name {
	case "build":
		s.build(t)
	case "detect":
		s.detect(t)
	case "verify":
		s.verify(t)
	case "damaged":
		s.damaged(t)
	case "fifo":
		s.fifo(t)
	case "cancel":
		s.cancel(t)
	default:
		t.Fatalf("no loader check %q", name)
	}
}

// fold writes the shards of the sample, WebDataset style, in a new
// directory, and returns it and the shards.
func (s *loaderSuite) fold(t testing.TB) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	var shards []string
	for i, sh := range Sample() {
		p := filepath.Join(dir, fmt.Sprintf("data-%06d.tar", i))
		if err := os.WriteFile(p, tarOf(t, sh), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, p)
	}
	return dir, shards
}

// built is a fold with its index: the files Build wrote, and the paths
// (those files, or their directories) Detect takes for the loader's.
type built struct {
	dir     string
	shards  []string
	outputs []string
	indexes []string
}

func (s *loaderSuite) built(t testing.TB) *built {
	t.Helper()
	dir, shards := s.fold(t)
	var outs []string
	err := guard(func() (err error) {
		outs, err = s.Build(context.Background(), shards)
		return err
	})
	if err != nil {
		t.Fatalf("Build over %s: %v", dir, err)
	}
	b := &built{dir: dir, shards: shards, outputs: outs}
	for _, o := range outs {
		relTo(t, dir, o) // beside the shards, to be copied with them
		for _, p := range []string{o, filepath.Dir(o)} {
			if p == dir || slices.Contains(b.indexes, p) {
				continue
			}
			if name, ok := s.Detect(p); ok && name == s.Name {
				b.indexes = append(b.indexes, p)
			}
		}
	}
	return b
}

// in is b's path p, in a copy of b's directory at dir.
func (b *built) in(t testing.TB, dir, p string) string {
	return filepath.Join(dir, relTo(t, b.dir, p))
}

// build: Build writes the files it says, and the loader's index is among
// them.
func (s *loaderSuite) build(t testing.TB) {
	b := s.built(t)
	if len(b.outputs) == 0 {
		t.Fatalf("Build over %v wrote nothing", b.shards)
	}
	for _, o := range b.outputs {
		if _, err := os.Stat(o); err != nil {
			t.Errorf("Build says it wrote %s: %v", o, err)
		}
	}
	if len(b.indexes) == 0 {
		t.Errorf("of the files Build wrote (%v), Detect takes none for %s's index", b.outputs, s.Name)
	}
}

// detect: the index is told by Detect; the shards and files of no
// loader are not taken for its index.
func (s *loaderSuite) detect(t testing.TB) {
	b := s.built(t)
	if len(b.indexes) == 0 {
		t.Fatalf("no index of %s's among %v", s.Name, b.outputs)
	}
	paths := slices.Clone(b.shards)
	for _, f := range foreign(t, "") {
		paths = append(paths, f.paths...)
	}
	for _, p := range paths {
		if name, ok := s.Detect(p); ok && name == s.Name {
			t.Errorf("%s: detected as %s's index", p, s.Name)
		}
	}
}

// verify: the index just built checks out against its shards.
func (s *loaderSuite) verify(t testing.TB) {
	b := s.built(t)
	for _, ix := range b.indexes {
		var probs []string
		err := guard(func() (err error) {
			probs, err = s.Check(context.Background(), ix)
			return err
		})
		if err != nil || len(probs) > 0 {
			t.Errorf("Check(%s) of the index just built: problems %q, error %v", ix, probs, err)
		}
	}
}

// checkAll checks every index of b, in its copy at dir: the problems
// and errors found, as one list; a panic or a check that does not return
// in time fails t.
func (s *loaderSuite) checkAll(t testing.TB, what string, b *built, dir string) (found []string) {
	t.Helper()
	for _, ix := range b.indexes {
		ix = b.in(t, dir, ix)
		var probs []string
		var err error
		if !within(func() {
			err = guard(func() (err error) {
				probs, err = s.Check(context.Background(), ix)
				return err
			})
		}) {
			t.Errorf("%s: Check(%s) did not return within %v", what, ix, deadline)
			return append(found, "blocked")
		}
		var p *panicError
		if errors.As(err, &p) {
			t.Errorf("%s: Check(%s): %v", what, ix, p)
		}
		if err != nil {
			found = append(found, err.Error())
		}
		found = append(found, probs...)
	}
	return found
}

// damaged: an index file truncated, emptied or with a byte flipped makes
// the check report a problem or fail, never panic.
func (s *loaderSuite) damaged(t testing.TB) {
	b := s.built(t)
	for _, o := range b.outputs {
		orig, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		s.sub(t, filepath.Base(o), func(t testing.TB) {
			for _, d := range damages {
				s.sub(t, d.name, func(t testing.TB) {
					for _, bad := range d.apply(orig) {
						what := fmt.Sprintf("%s %s (%d of %d bytes)", filepath.Base(o), d.name, len(bad), len(orig))
						if d.name == "flipped" {
							what = fmt.Sprintf("%s flipped at byte %d", filepath.Base(o), firstDiff(bad, orig))
						}
						dir := t.TempDir()
						copyTree(t, b.dir, dir)
						if err := os.WriteFile(b.in(t, dir, o), bad, 0o644); err != nil {
							t.Fatal(err)
						}
						found := s.checkAll(t, what, b, dir)
						switch {
						case len(found) > 0:
						case d.quiet && s.Unchecked != "":
							t.Logf("%s: unseen: %s", what, s.Unchecked)
						default:
							t.Errorf("%s: every check of %v found nothing wrong", what, b.indexes)
						}
					}
				})
			}
		})
	}
}

// fifo: a FIFO in place of an index file is refused at once: Detect and
// Check return, and the check of an index that is the FIFO fails.
func (s *loaderSuite) fifo(t testing.TB) {
	if !canFIFO {
		t.Skip("no FIFOs on " + runtime.GOOS)
	}
	b := s.built(t)
	for _, o := range b.outputs {
		s.sub(t, filepath.Base(o), func(t testing.TB) {
			dir := t.TempDir()
			copyTree(t, b.dir, dir)
			ff := b.in(t, dir, o)
			os.Remove(ff)
			if err := mkfifo(ff); err != nil {
				t.Fatal(err)
			}
			what := filepath.Base(o) + " as a FIFO"
			if !within(func() { s.Detect(ff) }) {
				unblock(ff)
				t.Fatalf("%s: Detect blocks", what)
			}
			found := s.checkAll(t, what, b, dir)
			if slices.Contains(found, "blocked") {
				unblock(ff)
			} else if len(found) == 0 {
				t.Errorf("%s: every check of %v found nothing wrong", what, b.indexes)
			}
		})
	}
}

// cancel: a canceled context stops Build (nothing written) and Check,
// with an error wrapping context.Canceled.
func (s *loaderSuite) cancel(t testing.TB) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	s.sub(t, "build", func(t testing.TB) {
		dir, shards := s.fold(t)
		before := snapshot(t, dir)
		err := guard(func() error { _, err := s.Build(canceled, shards); return err })
		wantCanceled(t, "Build with a canceled context", err)
		if diff := diffSnapshots(snapshot(t, dir), before); diff != "" {
			t.Errorf("Build with a canceled context: %s", diff)
		}
	})
	s.sub(t, "check", func(t testing.TB) {
		b := s.built(t)
		for _, ix := range b.indexes {
			err := guard(func() error { _, err := s.Check(canceled, ix); return err })
			wantCanceled(t, fmt.Sprintf("Check(%s) with a canceled context", ix), err)
		}
	})
}
