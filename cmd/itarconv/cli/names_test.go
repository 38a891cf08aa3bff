package cli

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// gzipWebDataset writes the shards of writeShards gzipped under
// WebDataset's names, <prefix>-000000.tar.gz ..., in a directory of their
// own, and returns it with the shards' plain bytes and the number of rows
// their index has.
func gzipWebDataset(t *testing.T, prefix string, n int) (string, [][]byte, int) {
	t.Helper()
	plain, _ := writeShards(t, n, 5)
	dir := filepath.Join(t.TempDir(), "wds")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var shards [][]byte
	for i := 0; i < n; i++ {
		b, err := os.ReadFile(filepath.Join(plain, fmt.Sprintf("train_%04d.tar", i)))
		if err != nil {
			t.Fatal(err)
		}
		var z bytes.Buffer
		zw := gzip.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%s-%06d.tar.gz", prefix, i)), z.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		shards = append(shards, b)
	}
	if code, _, stderr := run(t, "index", "-q", plain); code != 0 {
		t.Fatalf("index %s: exit %d: %s", plain, code, stderr)
	}
	_, stdout, _ := run(t, "ls", filepath.Join(plain, "train.taridx"))
	return dir, shards, strings.Count(stdout, "\n")
}

// dirNames lists a directory's file names.
func dirNames(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// indexAndVerify indexes the directory's fold again (as a user would,
// by the directory alone), then verifies it, payloads too, and lists it.
func indexAndVerify(t *testing.T, dir, idx string, rows int) {
	t.Helper()
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Errorf("index %s: exit %d: %s", dir, code, stderr)
	}
	if code, stdout, stderr := run(t, "verify", "--data", dir); code != 0 {
		t.Errorf("verify %s: exit %d: %s %s", dir, code, stdout, stderr)
	}
	code, stdout, stderr := run(t, "ls", filepath.Join(dir, idx))
	if code != 0 || strings.Count(stdout, "\n") != rows {
		t.Errorf("ls %s: exit %d, %d rows, want %d: %s", idx, code, strings.Count(stdout, "\n"), rows, stderr)
	}
}

// TestConvertKeepsWebDatasetNames: WebDataset-named .tar.gz shards
// converted into a directory keep their names, and the index is named
// after them; index, ls and verify read the output. --name names new
// shards by a pattern, --fold asks for glzn's names; a bad pattern and
// two shards of one name are usage errors that write nothing.
func TestConvertKeepsWebDatasetNames(t *testing.T) {
	wds, plain, rows := gzipWebDataset(t, "imagenet-val", 4)
	if rows == 0 {
		t.Fatal("no rows in the shards' index")
	}
	all := filepath.Join(wds, "imagenet-val-{000000..000003}.tar.gz")

	out := filepath.Join(t.TempDir(), "out")
	if code, _, stderr := run(t, "convert", "-q", all, out); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	want := []string{"imagenet-val-000000.tar", "imagenet-val-000001.tar", "imagenet-val-000002.tar", "imagenet-val-000003.tar",
		"imagenet-val.taridx", "imagenet-val.taridx.shards.json"}
	if got := dirNames(out); !slices.Equal(got, want) {
		t.Fatalf("kept names: %v, want %v", got, want)
	}
	for i, b := range plain {
		if got, _ := os.ReadFile(filepath.Join(out, want[i])); !bytes.Equal(got, b) {
			t.Errorf("%s differs from its source, decompressed", want[i])
		}
	}
	indexAndVerify(t, out, "imagenet-val.taridx", rows)

	// New shards by a pattern.
	out = filepath.Join(t.TempDir(), "out")
	if code, _, stderr := run(t, "convert", "-q", "--shard-size", "8KiB", "--name", "val-%03d.tar", wds, out); code != 0 {
		t.Fatalf("convert --name: exit %d: %s", code, stderr)
	}
	got := dirNames(out)
	if len(got) < 4 || got[0] != "val-000.tar" || got[1] != "val-001.tar" || !slices.Contains(got, "val.taridx") {
		t.Errorf("--name: %v", got)
	}
	indexAndVerify(t, out, "val.taridx", rows)

	// A partitioned run's merge names the shards by the pattern too, as
	// one run does.
	parted := filepath.Join(t.TempDir(), "out")
	for _, task := range []string{"0/2", "1/2"} {
		if code, _, stderr := run(t, "convert", "-q", "--task", task, "--shard-size", "8KiB", "--name", "val-%03d.tar", wds, parted); code != 0 {
			t.Fatalf("convert --task %s: exit %d: %s", task, code, stderr)
		}
	}
	if code, _, stderr := run(t, "merge", "-q", parted); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr)
	}
	// The tasks' shards are linked into place: where they end
	// may differ from one run's, their members, bytes and order may not.
	merged := dirNames(parted)
	if len(merged) < 4 || merged[0] != "val-000.tar" || merged[1] != "val-001.tar" || !slices.Contains(merged, "val.taridx") {
		t.Errorf("merged: %v", merged)
	}
	if code, stdout, stderr := run(t, "verify", "--data", parted); code != 0 {
		t.Errorf("verify the merged fold: exit %d: %s %s", code, stdout, stderr)
	}
	_, one, _ := run(t, "convert", "-q", out, "-")
	_, two, _ := run(t, "convert", "-q", parted, "-")
	if len(one) == 0 || one != two {
		t.Errorf("merged: its members as one tar stream (%d bytes) differ from one run's (%d)", len(two), len(one))
	}

	// glzn's names when a fold is named.
	out = filepath.Join(t.TempDir(), "out")
	if code, _, stderr := run(t, "convert", "-q", "--fold", "val", all, out); code != 0 {
		t.Fatalf("convert --fold: exit %d: %s", code, stderr)
	}
	if got := dirNames(out); !slices.Equal(got, []string{"val.taridx", "val_0000.tar", "val_0001.tar", "val_0002.tar", "val_0003.tar"}) {
		t.Errorf("--fold: %v", got)
	}

	// Usage errors, before anything is written.
	other := filepath.Join(t.TempDir(), "other")
	os.Mkdir(other, 0o755)
	b, _ := os.ReadFile(filepath.Join(wds, "imagenet-val-000000.tar.gz"))
	os.WriteFile(filepath.Join(other, "imagenet-val-000000.tar.gz"), b, 0o644)
	out = filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		say  []string
	}{
		{[]string{"--name", "val-%03d", wds}, []string{"--name", ".tar"}},
		{[]string{"--name", "val-%03d-%03d.tar", wds}, []string{"--name", "2 integer verbs"}},
		{[]string{"--name", "d/val-%03d.tar", wds}, []string{"--name", "path separators"}},
		{[]string{"--name", "val-%03d-x.tar", wds}, []string{"--name", "the number must come last"}},
		{[]string{"--name", "val-%03d.tar", "--to", "tbl", wds}, []string{"--name"}},
		{[]string{filepath.Join(wds, "imagenet-val-000000.tar.gz"), filepath.Join(other, "imagenet-val-000000.tar.gz")},
			[]string{wds, other, "imagenet-val-000000.tar", "--fold", "--name"}},
	} {
		args := append(append([]string{"convert", "-q"}, c.args...), out)
		code, _, stderr := run(t, args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want %d: %s", c.args, code, ExitUsage, stderr)
		}
		for _, s := range c.say {
			if !strings.Contains(stderr, s) {
				t.Errorf("%q: %q does not say %q", c.args, stderr, s)
			}
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%q: the refused run made %s", c.args, out)
		}
	}
}
