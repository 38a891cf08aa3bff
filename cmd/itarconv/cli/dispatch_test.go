package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tbl"
)

// TestConvertDispatch: the source is told by content, the target by the
// path's suffix or an existing target's content, --from and --to override,
// and a pair without a converter is a usage error naming both formats,
// with nothing written.
func TestConvertDispatch(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	tb := filepath.Join(work, "x.tbl")
	if code, _, stderr := run(t, "convert", "-q", "--fold", "train", src, tb); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// A TBL file whose name does not say so, and --to naming a target the
	// path does not tell.
	plain := filepath.Join(work, "plain")
	os.Link(tb, plain)
	if code, _, stderr := run(t, "convert", "-q", plain, filepath.Join(work, "fold")); code != 0 {
		t.Errorf("TBL by content: exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", "--to", "tbl", "--fold", "train", src, filepath.Join(work, "noext")); code != 0 {
		t.Errorf("--to tbl: exit %d: %s", code, stderr)
	} else if b, _ := os.ReadFile(filepath.Join(work, "noext")); len(b) < 3 || string(b[:3]) != "TBL" {
		t.Error("--to tbl did not write a TBL file")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"convert", "--from", "scdl", "--to", "scdl", src, filepath.Join(work, "y")}, "is already SCDL: nothing to convert"},
		{[]string{"convert", "--to", "scdl", src, tb, filepath.Join(work, "z")}, "--to scdl reads one directory of folds"},
		{[]string{"convert", "--to", "zip", src, filepath.Join(work, "z")}, `unknown format "zip"`},
		{[]string{"convert", tb, filepath.Join(work, "w.tbl")}, "is already TBL: nothing to convert"},
	} {
		code, _, stderr := run(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, stderr, c.want)
		}
	}
	for _, name := range []string{"y", "z", "w.tbl"} {
		if _, err := os.Lstat(filepath.Join(work, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
}

// TestBarecatToTBL: Barecat converts to TBL directly, never through a tar
// fold on disk, with the same samples, bytes and names as from the tars
// the archive was made of (Barecat keeps paths in path order).
func TestBarecatToTBL(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	bc := filepath.Join(work, "x.barecat")
	direct, via := filepath.Join(work, "direct.tbl"), filepath.Join(work, "via.tbl")
	for _, args := range [][]string{
		{"convert", "-q", "--fold", "train", src, bc},
		{"convert", "-q", "--fold", "train", src, direct},
		{"convert", "-q", bc, via},
	} {
		if code, _, stderr := run(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
	}
	samples := func(path string) map[string]string {
		r, err := tbl.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if err := r.Verify(); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out := map[string]string{}
		for i := range r.Len() {
			m, _ := r.Metadata(i)
			name, _ := tbl.SampleName(m)
			b, err := r.ReadSample(i, nil)
			if err != nil {
				t.Fatal(err)
			}
			out[name] = string(b)
		}
		return out
	}
	a, b := samples(direct), samples(via)
	if len(a) == 0 || !reflect.DeepEqual(a, b) {
		t.Errorf("direct %d samples, via Barecat %d; differ: %v", len(a), len(b), !reflect.DeepEqual(a, b))
	}
	if entries, _ := filepath.Glob(filepath.Join(work, "*.tar")); len(entries) != 0 {
		t.Errorf("tar files on disk: %v", entries)
	}
}

// TestTBLBarecatRoundTrip: TBL -> Barecat -> TBL directly, with every
// sample's bytes, format and metadata: the same file.
func TestTBLBarecatRoundTrip(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	orig, bc, back := filepath.Join(work, "o.tbl"), filepath.Join(work, "x.barecat"), filepath.Join(work, "back.tbl")
	for _, args := range [][]string{
		{"convert", "-q", "--fold", "train", src, orig},
		{"convert", "-q", orig, bc},
		{"verify", bc},
		{"convert", "-q", bc, back},
	} {
		if code, stdout, stderr := run(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s%s", args, code, stdout, stderr)
		}
	}
	a, _ := os.ReadFile(orig)
	b, _ := os.ReadFile(back)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Errorf("TBL -> Barecat -> TBL gives another file (%d bytes, was %d)", len(b), len(a))
	}
}
