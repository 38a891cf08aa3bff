package formattest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
)

// Format says how to run the suite on one registered format. Only Name is
// required; the rest describe what the format writes where the defaults
// (one file or directory at the output's path, every file of the sample
// read back as written) do not fit.
type Format struct {
	// Name is the format's name in the registry.
	Name string
	// Out is the name Create writes, in an empty directory of its own:
	// a name the format claims (Claims) when it claims by name, such as
	// "sample.tbl". Default "sample".
	Out string
	// Sample is the dataset Create writes (default Sample()), and Other
	// another, of other names and bytes, that the overwrite check writes
	// over it (default: Sample's names with an "x" before them, its bytes
	// changed).
	Sample, Other []Shard
	// Detected is the path of an output that the registry recognises by
	// content (default: the output itself; the tar format's is a shard).
	Detected func(out string) string
	// Files are the files of an output that the damage and FIFO checks
	// replace, one at a time (default: Detected's path).
	Files func(out string) []string
	// UncheckedIndex and UncheckedData say why the format records no
	// checksum of what locates the bytes (names, sizes: a TBL's metadata,
	// a Barecat index) or of the bytes themselves (a tar payload), where
	// it does not: a flipped byte there may then read back as another
	// without an error. Empty: the format checks them, and a flipped byte
	// must be an error or change nothing read.
	UncheckedIndex string
	UncheckedData  string
	// Make writes a sample in dir and returns its path, for a format that
	// has no Create (TARIDX); the checks that need Create are skipped.
	Make func(t testing.TB, dir string) string
	// Options are the format's own Create options
	// (registry.CreateOptions.Format).
	Options any
	// Skip names checks (or check/case, as the subtest is named) to skip,
	// with why: a bug the suite found, until it is fixed.
	Skip map[string]string
}

// Checks are the suite's checks, by the names of their subtests.
var Checks = []string{"detect", "roundtrip", "damaged", "fifo", "cancel", "overwrite", "partial"}

// deadline bounds what must not block: a FIFO refused, a damaged file
// refused.
var deadline = 10 * time.Second

// Run runs every check on the format f names, each in a subtest of its
// name, each case of it in a subtest below.
func Run(t *testing.T, f Format) {
	t.Helper()
	run(t, f)
}

// run runs the suite under t: a *testing.T, or a recorder.
func run(t testing.TB, f Format) {
	s := newSuite(t, f)
	for _, name := range Checks {
		s.sub(t, name, func(t testing.TB) { s.check(t, name) })
	}
}

// suite is one format under test, with its defaults filled in.
type suite struct {
	Format
	reg  *registry.Format
	root string // the name of the test that called Run
}

func newSuite(t testing.TB, f Format) *suite {
	t.Helper()
	reg := registry.Lookup(f.Name)
	if reg == nil {
		t.Fatalf("no format %q is registered (import its package)", f.Name)
	}
	if f.Out == "" {
		f.Out = "sample"
	}
	if f.Sample == nil {
		f.Sample = Sample()
	}
	if f.Other == nil {
		f.Other = sample("x", 0xa5)
	}
	if f.Detected == nil {
		f.Detected = func(out string) string { return out }
	}
	if f.Files == nil {
		f.Files = func(out string) []string { return []string{f.Detected(out)} }
	}
	if reg.Create == nil && f.Make == nil {
		t.Fatalf("%s has no Create: give Format.Make", f.Name)
	}
	return &suite{Format: f, reg: reg, root: t.Name()}
}

func (s *suite) check(t testing.TB, name string) {
	switch name {
	case "detect":
		s.detect(t)
	case "roundtrip":
		s.roundTrip(t)
	case "damaged":
		s.damaged(t)
	case "fifo":
		s.fifo(t)
	case "cancel":
		s.cancel(t)
	case "overwrite":
		s.overwrite(t)
	case "partial":
		s.partial(t)
	default:
		t.Fatalf("no check %q", name)
	}
}

func (s *suite) needCreate(t testing.TB) {
	if s.reg.Create == nil {
		t.Skipf("%s has no Create", s.Name)
	}
}

// create writes shards at dir/Out through the registry and returns the
// output's path.
func (s *suite) create(ctx context.Context, dir string, in registry.Input, overwrite bool) (string, error) {
	out := filepath.Join(dir, s.Out)
	err := guard(func() error {
		_, err := s.reg.Create(ctx, in, out, registry.CreateOptions{Workers: 2, Overwrite: overwrite, Format: s.Options})
		return err
	})
	return out, err
}

// sample writes the sample (Create, or Make) in a new directory.
func (s *suite) sample(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	if s.reg.Create == nil {
		return s.Make(t, dir)
	}
	out, err := s.create(context.Background(), dir, &Rows{Shards: s.Sample}, false)
	if err != nil {
		t.Fatalf("Create %s: %v", out, err)
	}
	return out
}

// detect: the registry recognises the format's output by its bytes (under
// another name too), and no other format's file, nor files of no format,
// as the format's.
func (s *suite) detect(t testing.TB) {
	out := s.sample(t)
	p := s.Detected(out)
	s.sub(t, "content", func(t testing.TB) {
		if got := name(registry.Detect(p)); got != s.Name {
			t.Errorf("Detect(%s) = %q, want %q", p, got, s.Name)
		}
	})
	s.sub(t, "renamed", func(t testing.TB) {
		// The same bytes under a name of no format.
		renamed := filepath.Join(t.TempDir(), "renamed.bin")
		copyTree(t, p, renamed)
		if !s.reg.Detect(renamed) {
			t.Errorf("%s copied to %s: not detected as %s: detection reads the name, not the bytes", p, renamed, s.Name)
		}
	})
	s.sub(t, "foreign", func(t testing.TB) {
		for _, f := range foreign(t, s.Name) {
			s.sub(t, f.name, func(t testing.TB) {
				for _, p := range f.paths {
					if s.reg.Detect(p) {
						t.Errorf("%s: detected as %s", p, s.Name)
					}
				}
			})
		}
	})
}

// roundTrip: Create from rows, then Open and read every entry back (the
// rows, the listing and each entry by name): names and bytes equal.
func (s *suite) roundTrip(t testing.TB) {
	s.needCreate(t)
	out := s.sample(t)
	got, err := s.readBack(context.Background(), out)
	if err != nil {
		t.Fatalf("reading back %s: %v", out, err)
	}
	s.compare(t, out, got, Files(s.Sample))
}

// compare checks what was read back against the files written.
func (s *suite) compare(t testing.TB, out string, got, want []File) {
	t.Helper()
	if diff := diffFiles(got, want); diff != "" {
		t.Errorf("%s reads back otherwise: %s", out, diff)
	}
}

func (s *suite) open(path string) (ds registry.Dataset, err error) {
	if s.reg.Open == nil {
		return nil, registry.ErrUnsupported
	}
	err = guard(func() error {
		ds, err = s.reg.Open([]string{path}, registry.OpenOptions{})
		return err
	})
	return ds, err
}

// readBack opens path and reads it three ways: its rows with their
// payloads, its listing, and each listed file by name. The three must
// agree; it returns the rows.
func (s *suite) readBack(ctx context.Context, path string) ([]File, error) {
	ds, err := s.open(path)
	if err != nil {
		return nil, fmt.Errorf("Open: %w", err)
	}
	defer ds.Close()
	var rows []File
	err = guard(func() error {
		src, err := ds.Rows(false)
		if err != nil {
			return err
		}
		defer registry.CloseSource(src)
		return dataset.Run(ctx, src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
			if r.Kind != dataset.KindFile {
				return nil
			}
			b, err := payload(src, r)
			if err != nil {
				return fmt.Errorf("row %q: %w", r.Name, err)
			}
			rows = append(rows, File{string(r.Name), b})
			return nil
		}), dataset.Options{Workers: 2})
	})
	if err != nil {
		return nil, fmt.Errorf("Rows: %w", err)
	}
	var listed []registry.Entry
	if err := guard(func() error {
		return ds.List(ctx, func(e registry.Entry) error {
			listed = append(listed, e)
			return nil
		})
	}); err != nil {
		return nil, fmt.Errorf("List: %w", err)
	}
	listedSize := map[string]int64{}
	for _, e := range listed {
		listedSize[e.Name] = e.Size
	}
	for _, r := range rows {
		size, ok := listedSize[r.Name]
		if !ok {
			return nil, fmt.Errorf("List: no entry %q, which Rows gives", r.Name)
		}
		if size != int64(len(r.Data)) {
			return nil, fmt.Errorf("List: %q has size %d, Rows %d bytes", r.Name, size, len(r.Data))
		}
		var b []byte
		if err := guard(func() (err error) {
			b, err = ds.ReadEntry(r.Name)
			return err
		}); err != nil {
			return nil, fmt.Errorf("ReadEntry(%q): %w", r.Name, err)
		}
		if !bytes.Equal(b, r.Data) && !duplicate(rows, r.Name) {
			return nil, fmt.Errorf("ReadEntry(%q): %d bytes, Rows %d bytes, not the same", r.Name, len(b), len(r.Data))
		}
	}
	var missing error
	if err := guard(func() error {
		_, err := ds.ReadEntry("formattest-no-such-entry")
		missing = err
		return nil
	}); err != nil {
		return nil, fmt.Errorf("ReadEntry of no entry: %w", err)
	}
	if !errors.Is(missing, fs.ErrNotExist) {
		return nil, fmt.Errorf("ReadEntry of no entry: %v, want an error wrapping fs.ErrNotExist", missing)
	}
	return rows, nil
}

// duplicate tells whether name is the name of more than one file.
func duplicate(files []File, name string) bool {
	n := 0
	for _, f := range files {
		if f.Name == name {
			n++
		}
	}
	return n > 1
}

// damages are the ways a file is damaged.
var damages = []struct {
	name  string
	apply func(b []byte) [][]byte // the damaged versions of b
	// quiet: the damage may go unseen, where the format checks no
	// checksum of the bytes hit (Format.UncheckedIndex, UncheckedData).
	quiet bool
}{
	{"truncated", func(b []byte) [][]byte {
		var v [][]byte
		for _, n := range []int{len(b) / 2, 16} {
			if n > 0 && n < len(b) {
				v = append(v, b[:n])
			}
		}
		return v
	}, false},
	// One byte short: the last newline of a text file, or a page's tail
	// that SQLite reads as zeros, may be no damage to what reads it.
	{"trimmed", func(b []byte) [][]byte {
		if len(b) < 2 {
			return nil
		}
		return [][]byte{b[:len(b)-1]}
	}, true},
	{"empty", func([]byte) [][]byte { return [][]byte{{}} }, false},
	{"flipped", func(b []byte) [][]byte {
		var v [][]byte
		for i := 0; i < 8 && len(b) > 0; i++ {
			off := i * len(b) / 8
			if i == 0 {
				off = len(b) / 64 // inside a header, past its magic
			}
			c := bytes.Clone(b)
			c[off] ^= 0x5a
			v = append(v, c)
		}
		return v
	}, true},
}

// damaged: a file of the format's, truncated, emptied or with a byte
// flipped, is still claimed as the format's (by name or layout) and is
// refused with an error, never a panic and never read as if whole.
func (s *suite) damaged(t testing.TB) {
	out := s.sample(t)
	want, err := s.readBack(context.Background(), out)
	if err != nil && s.reg.Open != nil {
		t.Fatalf("reading back %s: %v", out, err)
	}
	for _, file := range s.Files(out) {
		rel := relTo(t, filepath.Dir(out), file)
		orig, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		s.sub(t, filepath.Base(file), func(t testing.TB) {
			for _, d := range damages {
				s.sub(t, d.name, func(t testing.TB) {
					for _, b := range d.apply(orig) {
						what := fmt.Sprintf("%s %s (%d of %d bytes)", rel, d.name, len(b), len(orig))
						if d.name == "flipped" {
							what = fmt.Sprintf("%s flipped at byte %d", rel, firstDiff(b, orig))
						}
						dir := t.TempDir()
						copyTree(t, filepath.Dir(out), dir)
						if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
							t.Fatal(err)
						}
						s.refused(t, what, filepath.Join(dir, filepath.Base(out)), want, d.quiet)
					}
				})
			}
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// refused checks that the damaged output at out is claimed as the
// format's, and that reading, verifying and inspecting it end, without a
// panic, in an error; a quiet damage may instead read back as a whole
// dataset (want), or as another where the format checks no checksum of
// what changed.
func (s *suite) refused(t testing.TB, what, out string, want []File, quiet bool) {
	t.Helper()
	if got := name(registry.Claimed(out)); got != s.Name {
		t.Errorf("%s: Claimed(%s) = %q, want %q: a damaged file is reported as not a file of the format", what, out, got, s.Name)
	}
	r := s.all(out)
	for _, err := range []error{r.read, r.verify, r.inspect} {
		var p *panicError
		if errors.As(err, &p) {
			t.Errorf("%s: %v", what, p)
		}
	}
	if r.timedOut != "" {
		t.Errorf("%s: %s did not return within %v", what, r.timedOut, deadline)
		return
	}
	if s.reg.Verify != nil && r.verify == nil && r.read != nil {
		// Verify reads every byte: what reading refuses, it must too.
		t.Errorf("%s: Verify succeeded, but reading failed: %v", what, r.read)
	}
	switch {
	case r.refusedBy() != nil:
		checkMessage(t, what, r.refusedBy(), out)
	case s.reg.Open != nil && diffFiles(r.files, want) == "":
		// The damage hit bytes nothing reads (a page left free).
	case quiet && s.reg.Open == nil && s.UncheckedIndex != "":
	case quiet && sameNames(r.files, want) && s.UncheckedData != "":
		t.Logf("%s: unseen: %s", what, s.UncheckedData)
	case quiet && !sameNames(r.files, want) && s.UncheckedIndex != "":
		t.Logf("%s: unseen: %s", what, s.UncheckedIndex)
	default:
		t.Errorf("%s: not refused, and read back otherwise (%s): Open and every read %s, Verify %s, Inspect %s", what,
			diffFiles(r.files, want), errText(r.read), errText(r.verify), errText(r.inspect))
	}
}

// results are what reading, verifying and inspecting a path gave.
type results struct {
	files                 []File
	read, verify, inspect error
	timedOut              string // the operation that did not return in time
}

// refusedBy is the error that refused the input: Verify's, where the
// format verifies, else that of reading it, else Inspect's.
func (r *results) refusedBy() error {
	switch {
	case r.verify != nil && !errors.Is(r.verify, registry.ErrUnsupported):
		return r.verify
	case r.read != nil && !errors.Is(r.read, registry.ErrUnsupported):
		return r.read
	case r.inspect != nil && !errors.Is(r.inspect, registry.ErrUnsupported):
		return r.inspect
	}
	return nil
}

// all reads, verifies and inspects path, each within the deadline.
func (s *suite) all(path string) *results {
	r := &results{}
	ctx := context.Background()
	if !within(func() { r.files, r.read = s.readBack(ctx, path) }) {
		r.timedOut = "reading"
		return r
	}
	r.verify, r.inspect = registry.ErrUnsupported, registry.ErrUnsupported
	if s.reg.Verify != nil && !within(func() {
		r.verify = guard(func() error { _, err := s.reg.Verify(ctx, path); return err })
	}) {
		r.timedOut = "Verify"
		return r
	}
	if s.reg.Inspect != nil && !within(func() {
		r.inspect = guard(func() error { _, err := s.reg.Inspect(ctx, path); return err })
	}) {
		r.timedOut = "Inspect"
	}
	return r
}

// checkMessage: an error is one line, and names the dataset (its path,
// or the path of one of its files).
func checkMessage(t testing.TB, what string, err error, out string) {
	t.Helper()
	var p *panicError
	if errors.As(err, &p) {
		return // reported already
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") {
		t.Errorf("%s: the error is not one line: %q", what, msg)
	}
	if !strings.Contains(msg, filepath.Base(out)) {
		t.Errorf("%s: the error names no file of %s: %q", what, out, msg)
	}
}

func errText(err error) string {
	switch {
	case err == nil:
		return "succeeded"
	case errors.Is(err, registry.ErrUnsupported):
		return "unsupported"
	}
	return fmt.Sprintf("failed (%v)", err)
}

// fifo: a FIFO where a file of the format is expected is refused at once,
// never waited on (no writer will ever come): none of the format's
// functions blocks or panics, and the file detection reads is refused
// with an error.
func (s *suite) fifo(t testing.TB) {
	if !canFIFO {
		t.Skip("no FIFOs on " + runtime.GOOS)
	}
	out := s.sample(t)
	for i, file := range s.Files(out) {
		s.sub(t, filepath.Base(file), func(t testing.TB) {
			rel := relTo(t, filepath.Dir(out), file)
			dir := t.TempDir()
			copyTree(t, filepath.Dir(out), dir)
			dout := filepath.Join(dir, filepath.Base(out))
			ff := filepath.Join(dir, rel)
			os.Remove(ff)
			if err := mkfifo(ff); err != nil {
				t.Fatal(err)
			}
			what := rel + " as a FIFO"
			var detected *registry.Format
			if !within(func() { detected = registry.Detect(s.Detected(dout)) }) {
				unblock(ff)
				t.Fatalf("%s: Detect blocks", what)
			}
			if ff == s.Detected(dout) && detected != nil {
				t.Errorf("%s: Detect = %s", what, detected.Name)
			}
			r := s.all(dout)
			if r.timedOut != "" {
				unblock(ff)
				t.Fatalf("%s: %s blocks (waits for a writer)", what, r.timedOut)
			}
			for _, err := range []error{r.read, r.verify, r.inspect} {
				var p *panicError
				if errors.As(err, &p) {
					t.Errorf("%s: %v", what, p)
				}
			}
			// The file detection reads must be refused; another may be one
			// that reading the dataset does not open (an index beside it).
			if i == 0 && r.refusedBy() == nil {
				t.Errorf("%s: not refused: read %s, Verify %s, Inspect %s", what, errText(r.read), errText(r.verify), errText(r.inspect))
			}
		})
	}
}

// cancel: a canceled context stops Create (before it starts, and midway:
// nothing is left behind), Verify, Inspect and List, with an error
// wrapping context.Canceled.
func (s *suite) cancel(t testing.TB) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if s.reg.Create != nil {
		s.sub(t, "create", func(t testing.TB) {
			dir := t.TempDir()
			_, err := s.create(canceled, dir, &Rows{Shards: s.Sample}, false)
			wantCanceled(t, "Create with a canceled context", err)
			wantEmpty(t, "after Create with a canceled context", dir)
		})
		s.sub(t, "midway", func(t testing.TB) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			half := len(Files(s.Sample)) / 2
			in := &Rows{Shards: s.Sample, OnRow: func(n int) {
				if n == half {
					cancel()
				}
			}}
			_, err := s.create(ctx, dir, in, false)
			wantCanceled(t, fmt.Sprintf("Create canceled at row %d", half), err)
			wantEmpty(t, "after Create canceled midway", dir)
		})
	}
	out := s.sample(t)
	if s.reg.Verify != nil {
		s.sub(t, "verify", func(t testing.TB) {
			err := guard(func() error { _, err := s.reg.Verify(canceled, out); return err })
			wantCanceled(t, "Verify with a canceled context", err)
		})
	}
	if s.reg.Inspect != nil {
		s.sub(t, "inspect", func(t testing.TB) {
			err := guard(func() error { _, err := s.reg.Inspect(canceled, out); return err })
			wantCanceled(t, "Inspect with a canceled context", err)
		})
	}
	if s.reg.Open != nil {
		s.sub(t, "list", func(t testing.TB) {
			ds, err := s.open(out)
			if err != nil {
				t.Fatalf("Open %s: %v", out, err)
			}
			defer ds.Close()
			err = guard(func() error {
				return ds.List(canceled, func(registry.Entry) error { return nil })
			})
			wantCanceled(t, "List with a canceled context", err)
		})
	}
}

func wantCanceled(t testing.TB, what string, err error) {
	t.Helper()
	if !errors.Is(err, context.Canceled) {
		t.Errorf("%s: %v, want an error wrapping context.Canceled", what, errText(err))
	}
}

// wantEmpty: dir holds nothing (no output, no temporary).
func wantEmpty(t testing.TB, what, dir string) {
	t.Helper()
	if left := snapshot(t, dir); len(left) > 0 {
		t.Errorf("%s: left in %s: %v", what, dir, keys(left))
	}
}

// overwrite: Create onto an existing output is refused (an error wrapping
// fs.ErrExist) and changes nothing, unless told to overwrite: then the new
// dataset replaces the old, and nothing else is left beside it.
func (s *suite) overwrite(t testing.TB) {
	s.needCreate(t)
	s.sub(t, "refused", func(t testing.TB) {
		out := s.sample(t)
		dir := filepath.Dir(out)
		before := snapshot(t, dir)
		_, err := s.create(context.Background(), dir, &Rows{Shards: s.Other}, false)
		if !errors.Is(err, fs.ErrExist) {
			t.Errorf("Create onto %s without Overwrite: %s, want an error wrapping fs.ErrExist", out, errText(err))
		}
		if diff := diffSnapshots(snapshot(t, dir), before); diff != "" {
			t.Errorf("Create onto %s without Overwrite changed it: %s", out, diff)
		}
	})
	s.sub(t, "replaced", func(t testing.TB) {
		out := s.sample(t)
		dir := filepath.Dir(out)
		if _, err := s.create(context.Background(), dir, &Rows{Shards: s.Other}, true); err != nil {
			t.Fatalf("Create onto %s with Overwrite: %v", out, err)
		}
		got, err := s.readBack(context.Background(), out)
		if err != nil {
			t.Fatalf("reading back %s, overwritten: %v", out, err)
		}
		s.compare(t, out, got, Files(s.Other))
		// Nothing but what a fresh Create writes: no temporary, nothing
		// of the old dataset's.
		fresh, err := s.create(context.Background(), t.TempDir(), &Rows{Shards: s.Other}, false)
		if err != nil {
			t.Fatalf("Create %s: %v", fresh, err)
		}
		if diff := diffNames(snapshot(t, dir), snapshot(t, filepath.Dir(fresh))); diff != "" {
			t.Errorf("%s overwritten holds other files than one created afresh: %s", out, diff)
		}
	})
}

// partial: a Create whose source fails midway (in a scan, or reading a
// payload) returns the source's error and leaves nothing: no output, no
// temporary; over an existing output with Overwrite, the old one intact.
func (s *suite) partial(t testing.TB) {
	s.needCreate(t)
	n := len(Files(s.Sample))
	for _, c := range []struct {
		name    string
		payload bool
	}{{"scan", false}, {"payload", true}} {
		in := &Rows{Shards: s.Sample, FailAfter: n - 2, FailPayload: c.payload}
		s.sub(t, c.name, func(t testing.TB) {
			dir := t.TempDir()
			_, err := s.create(context.Background(), dir, in, false)
			if !errors.Is(err, ErrInjected) {
				t.Errorf("Create from a source whose %s fails at row %d: %s, want an error wrapping the source's", c.name, n-2, errText(err))
			}
			wantEmpty(t, fmt.Sprintf("after Create from a source whose %s fails", c.name), dir)
		})
		s.sub(t, c.name+"-overwrite", func(t testing.TB) {
			out := s.sample(t)
			before := snapshot(t, filepath.Dir(out))
			_, err := s.create(context.Background(), filepath.Dir(out), in, true)
			if !errors.Is(err, ErrInjected) {
				t.Errorf("Create with Overwrite from a source whose %s fails: %s, want an error wrapping the source's", c.name, errText(err))
			}
			if diff := diffSnapshots(snapshot(t, filepath.Dir(out)), before); diff != "" {
				t.Errorf("Create with Overwrite from a source whose %s fails changed %s: %s", c.name, out, diff)
			}
		})
	}
}

// panicError is a panic recovered from a format's function.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string {
	return fmt.Sprintf("panic: %v\n%s", p.value, p.stack)
}

// guard runs fn, turning a panic into an error: one format's bug fails its
// test, not every test of the binary.
func guard(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{v, debug.Stack()}
		}
	}()
	return fn()
}

// within runs fn, and reports whether it returned before the deadline. A
// call that did not is left running (on a FIFO, until unblock).
func within(fn func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	select {
	case <-done:
		return true
	case <-time.After(deadline):
		return false
	}
}

func name(f *registry.Format) string {
	if f == nil {
		return ""
	}
	return f.Name
}

func names(files []File) []string {
	var n []string
	for _, f := range files {
		n = append(n, f.Name)
	}
	return n
}

// sameNames tells whether two lists of files have the same names.
func sameNames(a, b []File) bool {
	return slices.Equal(names(a), names(b))
}

// diffFiles says how got differs from want ("" when not).
func diffFiles(got, want []File) string {
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("%d files, want %d: missing %q", len(got), len(want), want[i].Name)
		case i >= len(want):
			return fmt.Sprintf("%d files, want %d: extra %q", len(got), len(want), got[i].Name)
		case got[i].Name != want[i].Name:
			return fmt.Sprintf("file %d is %q, want %q (read: %v)", i, got[i].Name, want[i].Name, names(got))
		case !bytes.Equal(got[i].Data, want[i].Data):
			at := firstDiff(got[i].Data, want[i].Data)
			return fmt.Sprintf("%s: %d bytes, want %d, differing from byte %d: %.24q, want %.24q", got[i].Name,
				len(got[i].Data), len(want[i].Data), at, got[i].Data[at:], want[i].Data[at:])
		}
	}
	return ""
}
