package cli

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/testing/testutil"
)

// scdlCase copies a conformance archive to a new directory.
func scdlCase(t *testing.T, name string) string {
	t.Helper()
	src := filepath.Join(testutil.Conformance(t, "scdl"), name, "scdl")
	dst := filepath.Join(t.TempDir(), name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func sameDirs(t *testing.T, a, b string) {
	t.Helper()
	n := 0
	filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		rel, _ := filepath.Rel(a, p)
		x, _ := os.ReadFile(p)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil || !bytes.Equal(x, y) {
			t.Errorf("%s differs (%v)", rel, err)
		}
		return nil
	})
	if n < 10 {
		t.Errorf("only %d files compared", n)
	}
}

func TestConvertSCDLBothModes(t *testing.T) {
	src := scdlCase(t, "counts_uint8")
	for _, c := range []struct {
		args  []string
		folds []string
	}{
		{nil, []string{"cells_0000.tar", "cells_0001.tar", "cells.taridx", "scdlmeta_0000.tar", "scdlmeta.taridx"}},
		{[]string{"--scdl-mode", "archive"}, []string{"scdl_0000.tar", "scdl.taridx"}},
	} {
		out := filepath.Join(t.TempDir(), "out")
		args := append([]string{"convert", "-q", "--cells-per-shard", "30"}, c.args...)
		if len(c.args) > 0 {
			args = append([]string{"convert", "-q"}, c.args...)
		}
		if code, _, stderr := run(t, append(args, src, out)...); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, f := range c.folds {
			if _, err := os.Stat(filepath.Join(out, f)); err != nil {
				t.Errorf("%v: %v", c.args, err)
			}
		}
		back := filepath.Join(t.TempDir(), "back")
		code, stdout, stderr := runResult(t, "convert", "--json", "--to", "scdl", out, back)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var st struct {
			Mode  string `json:"mode"`
			Cells int    `json:"cells"`
			Fresh bool   `json:"fresh"`
		}
		if err := json.Unmarshal([]byte(stdout), &st); err != nil || st.Cells != 40 || st.Fresh {
			t.Errorf("%v: %+v (%v)", c.args, st, err)
		}
		sameDirs(t, src, back)
	}
}

func TestConvertSCDLErrors(t *testing.T) {
	good := scdlCase(t, "basic_50x30_f32")
	damage := func(name string, f func(dir string)) string {
		d := scdlCase(t, "basic_50x30_f32")
		f(d)
		return d
	}
	patch := func(file string, off int, b ...byte) func(string) {
		return func(d string) {
			p := filepath.Join(d, file)
			x, _ := os.ReadFile(p)
			copy(x[off:], b)
			os.WriteFile(p, x, 0o644)
		}
	}
	for _, c := range []struct {
		name string
		src  string
		args []string
		code int
		want string
	}{
		{"bad magic", damage("m", patch("header.sch", 0, 'X')), nil, 1, `header.sch: offset 0: not a valid SCDL archive: bad magic "XCDL"`},
		{"endianness", damage("e", patch("header.sch", 7, 2)), nil, 1, "header.sch: offset 7: unsupported SCDL data: endianness 2"},
		{"backend", damage("b", patch("header.sch", 11, 9)), nil, 1, "backend 9"},
		{"dtype", damage("d", patch("header.sch", 32, 0x63)), nil, 1, "not an ArrayDType"},
		{"truncated header", damage("t", func(d string) {
			p := filepath.Join(d, "header.sch")
			x, _ := os.ReadFile(p)
			os.WriteFile(p, x[:40], 0o644)
		}), nil, 1, "truncated SCDL data"},
		{"array size", damage("s", func(d string) {
			f, _ := os.OpenFile(filepath.Join(d, "data.npy"), os.O_APPEND|os.O_WRONLY, 0)
			f.Write([]byte{0, 0, 0, 0})
			f.Close()
		}), nil, 1, "data.npy: offset 1140: corrupt SCDL archive: 1144 bytes, but the header's DATA array holds 285 float32 elements (1140 bytes)"},
		{"row_ptr decreasing", damage("r", func(d string) {
			p := filepath.Join(d, "row_ptr.npy")
			x, _ := os.ReadFile(p) // uint16
			binary.LittleEndian.PutUint16(x[4:], 0)
			os.WriteFile(p, x, 0o644)
		}), nil, 1, "row_ptr.npy: offset 4: corrupt SCDL archive: row_ptr[2] = 0 is below row_ptr[1] = 1: offsets must not decrease"},
		{"gene out of range", damage("g", patch("col_ptr.npy", 0, 30)), nil, 1, "col_ptr.npy: offset 0: corrupt SCDL archive: col_ptr[0] = 30 (row 0) is not below 30"},
		{"mode", good, []string{"--scdl-mode", "rows"}, 2, `--scdl-mode: "rows"`},
		{"cells per shard in archive mode", good, []string{"--scdl-mode", "archive", "--cells-per-shard", "3"}, 2, "--cells-per-shard applies to --scdl-mode cells"},
		{"wrap", good, []string{"--wrap"}, 2, "apply to converting tar shards to Barecat"},
	} {
		t.Run(c.name, func(t *testing.T) {
			parent := t.TempDir()
			args := append(append([]string{"convert", "-q"}, c.args...), c.src, filepath.Join(parent, "out"))
			code, _, stderr := run(t, args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, %q; want %d and %q", code, stderr, c.code, c.want)
			}
			if left, _ := os.ReadDir(parent); len(left) != 0 {
				t.Errorf("left behind: %s", left[0].Name())
			}
		})
	}
}

func TestConvertToSCDLRefusals(t *testing.T) {
	src := scdlCase(t, "basic_50x30_f32")
	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := run(t, "convert", "-q", src, out); code != 0 {
		t.Fatal(stderr)
	}
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"exists", []string{"convert", "--to", "scdl", out, src}, 1, "exists; --force replaces it"},
		{"shard size", []string{"convert", "--to", "scdl", "--shard-size", "1M", out, filepath.Join(t.TempDir(), "x")}, 2, "--shard-size"},
		{"not a directory", []string{"convert", "--to", "scdl", filepath.Join(out, "cells.taridx"), filepath.Join(t.TempDir(), "x")}, 2, "not a directory"},
		{"unknown fold", []string{"convert", "--to", "scdl", "--fold", "nope", out, filepath.Join(t.TempDir(), "x")}, 1, `no fold "nope" (folds: cells, scdlmeta)`},
	} {
		code, _, stderr := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%s: exit %d, %q; want %d and %q", c.name, code, stderr, c.code, c.want)
		}
	}
	// Cells without scdlmeta: a fresh archive, and a warning that says so.
	os.Remove(filepath.Join(out, "scdlmeta_0000.tar"))
	os.Remove(filepath.Join(out, "scdlmeta.taridx"))
	fresh := filepath.Join(t.TempDir(), "fresh")
	code, _, stderr := run(t, "convert", "--to", "scdl", out, fresh)
	if code != 0 || !strings.Contains(stderr, "a var_features index whose genes are named by their index") || !strings.Contains(stderr, "version 0.1.0") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"data.npy", "row_ptr.npy", "col_ptr.npy"} {
		a, _ := os.ReadFile(filepath.Join(src, f))
		b, _ := os.ReadFile(filepath.Join(fresh, f))
		if !bytes.Equal(a, b) {
			t.Errorf("%s differs from the original's", f)
		}
	}
}

func TestInspectSCDL(t *testing.T) {
	src := scdlCase(t, "concat_2x_same_genes")
	code, out, errOut := run(t, "inspect", src)
	if code != 0 {
		t.Fatalf("inspect: exit %d: %s", code, errOut)
	}
	text := out
	for _, w := range []string{"version:", "0.1.0 (endianness 1, backend 1)", "cells:", "55", "DATA", "float32",
		"genes per block:", "[0, 55)", "30", "metadata.json says 30 rows, the header 55", "header and files agree"} {
		if !strings.Contains(text, w) {
			t.Errorf("inspect lacks %q:\n%s", w, text)
		}
	}
	// --json, and a mismatch: exit 1 with every one listed.
	bad := scdlCase(t, "basic_50x30_f32")
	os.WriteFile(filepath.Join(bad, "col_ptr.npy"), []byte{1, 2}, 0o644)
	os.Remove(filepath.Join(bad, "var_features", "labels.json"))
	code, out, _ = runResult(t, "inspect", "--json", bad)
	if code != 1 {
		t.Fatalf("inspect of a mismatch: exit %d", code)
	}
	var info scdl.Info
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	if info.Cells != 50 || info.NNZ != 285 || len(info.Mismatches) != 2 ||
		!strings.Contains(info.Mismatches[0], "col_ptr.npy: 2 bytes, but the header's COLPTR array holds 285 uint8 elements (285 bytes)") ||
		!strings.Contains(info.Mismatches[1], `"var_features/labels.json": missing`) {
		t.Errorf("%+v", info)
	}
	good := scdlCase(t, "basic_50x30_f32")
	if code, out, _ = runResult(t, "inspect", "--json", good); code != 0 {
		t.Fatalf("inspect: exit %d", code)
	}
	json.Unmarshal([]byte(out), &info)
	// 285 values in 50 rows of 30 genes.
	if info.Density != 285.0/1500 || len(info.Blocks) != 1 || info.Blocks[0].NGenes != 30 {
		t.Errorf("density %v, blocks %+v", info.Density, info.Blocks)
	}
}

// TestVerifySCDL: verify reads an SCDL archive whole; a row_ptr that runs
// past the values is reported, exit 1.
func TestVerifySCDL(t *testing.T) {
	dir := scdlCase(t, "basic_50x30_f32")
	code, stdout, stderr := run(t, "verify", dir)
	if code != 0 || !strings.Contains(stdout, "OK: 50 cells") {
		t.Fatalf("verify: exit %d: %s%s", code, stdout, stderr)
	}
	rp := filepath.Join(dir, "row_ptr.npy")
	b, _ := os.ReadFile(rp)
	b[len(b)-1] = 0xff // the last row's end, past the values
	os.WriteFile(rp, b, 0o644)
	code, stdout, _ = run(t, "verify", dir)
	if code != ExitData || !strings.Contains(stdout, "BROKEN") {
		t.Errorf("damaged row_ptr: exit %d: %s", code, stdout)
	}
}

// TestSCDLPairFlags: flags of tar shards are usage errors for SCDL's pairs
// with Barecat and TBL, with nothing written; a TBL without names cannot
// carry an archive back, and says so before reading.
func TestSCDLPairFlags(t *testing.T) {
	archive := scdlCase(t, "basic_50x30_f32")
	work := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"convert", "--fold", "x", archive, filepath.Join(work, "a.tbl")}, ExitUsage, "--fold names the fold of tar shards"},
		{[]string{"convert", "--cells-per-shard", "5", archive, filepath.Join(work, "a.barecat")}, ExitUsage, "--cells-per-shard applies to SCDL to tar shards"},
		{[]string{"convert", "--scdl-mode", "rows", archive, filepath.Join(work, "a.barecat")}, ExitUsage, `--scdl-mode: "rows"`},
	} {
		code, _, stderr := run(t, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, code, stderr, c.code, c.want)
		}
	}
	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("written: %v", entries)
	}
	v1 := filepath.Join(work, "v1.tbl")
	if code, _, stderr := run(t, "convert", "-q", "--tbl-version", "1", archive, v1); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	code, _, stderr := run(t, "convert", "--to", "scdl", v1, filepath.Join(work, "back"))
	if code != ExitData || !strings.Contains(stderr, "keeps no file names") {
		t.Errorf("TBL v1 -> SCDL: exit %d, %q", code, stderr)
	}
	if _, err := os.Lstat(filepath.Join(work, "back")); err == nil {
		t.Error("back was written")
	}
}
