package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tbl"
)

// TestTBLBadJSONReported: a JSON-typed metadata block that does not parse
// fails verify and is named by convert, never used as a name.
func TestTBLBadJSONReported(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "b.tbl")
	w, err := tbl.Create(path, tbl.WriterOptions{Version: 2, NumSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	w.Add(tbl.JPEG, strings.NewReader("a"), 1, []tbl.MetaEntry{tbl.NameMeta("a.jpg")})
	w.Add(tbl.JPEG, strings.NewReader("b"), 1, []tbl.MetaEntry{{Type: tbl.MetaJSON, Data: []byte(`{"name":"b.jpg"`)}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := run(t, "verify", path)
	if code != ExitData || !strings.Contains(stdout, "1 JSON-typed metadata blocks do not parse (sample 1 block 0)") {
		t.Errorf("verify: exit %d, %q", code, stdout)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := run(t, "convert", path, out)
	if code != 0 || !strings.Contains(stderr, "1 samples have a JSON-typed metadata block that does not parse (first: sample [1])") {
		t.Errorf("convert: exit %d, %q", code, stderr)
	}
	code, stdout, _ = run(t, "ls", out)
	if code != 0 || !strings.Contains(stdout, "000000001.jpg") || strings.Contains(stdout, "\tb.jpg") {
		t.Errorf("ls: exit %d:\n%s", code, stdout)
	}
}
