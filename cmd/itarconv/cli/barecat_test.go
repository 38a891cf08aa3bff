package cli

import (
	"archive/tar"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBarecatFilesNotIndexed: converting a Barecat archive to tar, and
// indexing a wrapped one's tars, say how many files the index leaves out
// and why, naming them, in text and in JSON; the count of files checked is
// every file, not the index's rows.
func TestBarecatFilesNotIndexed(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, name := range []string{"a.jpg", "a.cls", "LICENSE", "notes.tx t", "sub/README"} {
		tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: 3, Typeflag: tar.TypeReg})
		tw.Write([]byte("abc"))
	}
	tw.Close()
	if err := os.WriteFile(filepath.Join(dir, "train_0000.tar"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	bc := filepath.Join(out, "d.barecat")
	if code, _, stderr := run(t, "convert", "-q", dir, bc); code != 0 {
		t.Fatalf("to barecat: exit %d: %s", code, stderr)
	}
	const want = `3 files not indexed (2 without an extension, 1 with white space in it; glzn's loader cannot read them), e.g. "LICENSE", "notes.tx t", "sub/README"`

	code, stdout, stderr := runResult(t, "convert", "--json", bc, filepath.Join(out, "back"))
	if code != 0 || !strings.Contains(stderr, "warning: "+bc+": "+want) {
		t.Fatalf("to tar: exit %d, stderr:\n%s", code, stderr)
	}
	var fold struct {
		Index struct {
			Rows       int64 `json:"rows"`
			NoExt      int64 `json:"skipped_no_extension"`
			SpaceInExt int64 `json:"skipped_space_in_extension"`
		} `json:"index"`
	}
	if err := json.Unmarshal([]byte(stdout), &fold); err != nil || fold.Index.Rows != 2 || fold.Index.NoExt != 2 || fold.Index.SpaceInExt != 1 {
		t.Errorf("to tar --json: %v %+v: %s", err, fold, stdout)
	}

	wrapped := filepath.Join(out, "w.barecat")
	if code, _, stderr := run(t, "convert", "-q", "--wrap", dir, wrapped); code != 0 {
		t.Fatalf("wrap: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runResult(t, "convert", "--json", "--reuse-tars", wrapped, filepath.Join(out, "idx"))
	if code != 0 || !strings.Contains(stderr, "warning: "+wrapped+": "+want) || !strings.Contains(stderr, ": 5 files checked against their tar members;") ||
		!strings.Contains(stderr, "indexes 2 members of") {
		t.Fatalf("reuse-tars: exit %d, stderr:\n%s", code, stderr)
	}
	var reuse struct {
		Files    int64    `json:"files_checked"`
		Rows     int64    `json:"rows"`
		NoExt    int64    `json:"skipped_no_extension"`
		Space    int64    `json:"skipped_space_in_extension"`
		Examples []string `json:"skipped_examples"`
	}
	if err := json.Unmarshal([]byte(stdout), &reuse); err != nil || reuse.Files != 5 || reuse.Rows != 2 || reuse.NoExt != 2 || reuse.Space != 1 ||
		strings.Join(reuse.Examples, "|") != "LICENSE|notes.tx t|sub/README" {
		t.Errorf("reuse-tars --json: %v %+v: %s", err, reuse, stdout)
	}
}
