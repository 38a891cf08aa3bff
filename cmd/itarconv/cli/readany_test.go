package cli

import (
	"archive/tar"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// tarMembers reads every regular member of the tar files.
func tarMembers(t *testing.T, paths ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	testutil.EachTarMember(t, paths, func(h *tar.Header, b []byte) {
		if h.Typeflag == tar.TypeReg {
			out[h.Name] = string(b)
		}
	})
	return out
}

// TestLsCatEveryFormat: ls lists a Barecat archive's files and a TBL
// file's samples under the names a conversion to tar gives them, and cat
// writes each one's bytes, the source member's.
func TestLsCatEveryFormat(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	want := tarMembers(t, filepath.Join(src, "train_0000.tar"), filepath.Join(src, "train_0001.tar"))
	work := t.TempDir()
	for _, out := range []string{filepath.Join(work, "x.barecat"), filepath.Join(work, "x.tbl")} {
		if code, _, stderr := run(t, "convert", "-q", "--fold", "train", src, out); code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		code, result, stderr := runResult(t, "ls", "--json", out)
		if code != 0 {
			t.Fatalf("ls %s: exit %d: %s", out, code, stderr)
		}
		n := 0
		for _, row := range lsEntries(t, result) {
			var e struct {
				Path, Name string
				Size       int64
			}
			if err := json.Unmarshal(row, &e); err != nil {
				t.Fatal(err)
			}
			name := e.Path + e.Name // one of the two is set
			body, ok := want[name]
			if !ok || int64(len(body)) != e.Size {
				t.Errorf("ls %s: %q (%d bytes) is no member of the source", out, name, e.Size)
				continue
			}
			code, got, stderr := run(t, "cat", out, name)
			if code != 0 || got != body {
				t.Errorf("cat %s %s: exit %d, %d bytes, %s", out, name, code, len(got), stderr)
			}
			n++
		}
		if n != len(want) {
			t.Errorf("ls %s: %d entries, want %d", out, n, len(want))
		}
		if code, stdout, _ := run(t, "cat", out, "no/such.jpg"); code != ExitData || stdout != "" {
			t.Errorf("cat of a missing name: exit %d, %q", code, stdout)
		}
	}
}

// TestLsCatSCDL: ls lists an SCDL archive's cells and other files under
// the names a conversion gives them (a conversion to Barecat, here), and
// cat writes each one's bytes.
func TestLsCatSCDL(t *testing.T) {
	archive := scdlCase(t, "basic_50x30_f32")
	bc := filepath.Join(t.TempDir(), "x.barecat")
	if code, _, stderr := run(t, "convert", "-q", archive, bc); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := contents(t, "barecat", bc)
	code, result, stderr := runResult(t, "ls", "--json", archive)
	if code != 0 {
		t.Fatalf("ls: exit %d: %s", code, stderr)
	}
	n := 0
	for _, row := range lsEntries(t, result) {
		var e struct {
			Name string
			Size int64
		}
		if err := json.Unmarshal(row, &e); err != nil {
			t.Fatal(err)
		}
		body, ok := want[e.Name]
		if !ok || int64(len(body)) != e.Size {
			t.Errorf("ls: %q (%d bytes) is not in the Barecat conversion", e.Name, e.Size)
			continue
		}
		code, got, stderr := run(t, "cat", archive, e.Name)
		if code != 0 || got != body {
			t.Errorf("cat %s: exit %d, %d bytes, %s", e.Name, code, len(got), stderr)
		}
		n++
	}
	if n != len(want) || n != 3*50+11 {
		t.Errorf("ls: %d entries, want %d (3 a cell, and 11 other files)", n, len(want))
	}
	for _, name := range []string{"000000050.json", "00000001.json", "scdlmeta/data.npy", "header.sch"} {
		if code, stdout, _ := run(t, "cat", archive, name); code != ExitData || stdout != "" {
			t.Errorf("cat %s: exit %d, %q; want 1 and nothing", name, code, stdout)
		}
	}
}
