package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
)

// webdatasetShards writes the shards of writeShards under WebDataset's
// names (imagenet-train-000000.tar, ...) in a directory of their own, and
// returns it with the directory of the same shards named train_NNNN.tar.
func webdatasetShards(t *testing.T, n int) (wds, plain string, payloads map[string][]byte) {
	t.Helper()
	plain, payloads = writeShards(t, n, 5)
	wds = filepath.Join(t.TempDir(), "wds")
	if err := os.Mkdir(wds, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		b, err := os.ReadFile(filepath.Join(plain, fmt.Sprintf("train_%04d.tar", i)))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(wds, fmt.Sprintf("imagenet-train-%06d.tar", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return wds, plain, payloads
}

// TestShardSetForms: a directory of WebDataset names, a brace pattern, a
// glob, an @FILE list and the files listed give the index of the same
// shards named train_NNNN.tar, byte for byte; ls, cat and verify then
// need the index (or its directory) only.
func TestShardSetForms(t *testing.T) {
	wds, plain, payloads := webdatasetShards(t, 12)
	if code, _, stderr := run(t, "index", "-q", plain); code != 0 {
		t.Fatalf("plain: exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(plain, "train.taridx"))
	if len(want) == 0 {
		t.Fatal("no plain index")
	}
	list := filepath.Join(wds, "shards.txt")
	var lines []string
	for i := 0; i < 12; i++ {
		lines = append(lines, fmt.Sprintf("imagenet-train-%06d.tar", i))
	}
	os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	files := make([]string, 12)
	for i := range files {
		files[i] = filepath.Join(wds, lines[i])
	}
	for _, tt := range []struct {
		name string
		args []string
	}{
		{"directory", []string{wds}},
		{"brace pattern", []string{filepath.Join(wds, "imagenet-train-{000000..000011}.tar")}},
		{"glob", []string{filepath.Join(wds, "imagenet-train-*.tar")}},
		{"list file", []string{"@" + list}},
		{"files", files},
	} {
		t.Run(tt.name, func(t *testing.T) {
			idx := filepath.Join(wds, "imagenet-train.taridx")
			os.Remove(idx)
			os.Remove(fold.ManifestPath(idx))
			code, _, stderr := run(t, append([]string{"index", "-q"}, tt.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			got, _ := os.ReadFile(idx)
			if !bytes.Equal(got, want) {
				t.Fatalf("index of %d bytes differs from the plain shards' (%d)", len(got), len(want))
			}
			m, err := fold.ReadManifest(idx)
			if err != nil || len(m.Shards) != 12 || m.Shards[11].Path != "imagenet-train-000011.tar" {
				t.Fatalf("manifest %+v: %v", m, err)
			}
			st, _ := os.Stat(files[11])
			if m.Shards[11].Size != st.Size() {
				t.Errorf("manifest size %d, shard %d", m.Shards[11].Size, st.Size())
			}
		})
	}

	idx := filepath.Join(wds, "imagenet-train.taridx")
	for _, target := range []string{idx, wds} {
		code, stdout, stderr := run(t, "ls", target)
		if code != 0 || strings.Count(stdout, "\n") != 120 || !strings.Contains(stdout, "imagenet-train-000011.tar") {
			t.Errorf("ls %s: exit %d: %d lines: %s", target, code, strings.Count(stdout, "\n"), stderr)
		}
		code, stdout, stderr = run(t, "cat", target, "s000059.jpg")
		if code != 0 || stdout != string(payloads["s000059.jpg"]) {
			t.Errorf("cat %s: exit %d: %q", target, code, stderr)
		}
		if code, stdout, stderr := run(t, "verify", target); code != 0 {
			t.Errorf("verify %s: exit %d: %s %s", target, code, stdout, stderr)
		}
	}

	// A shard whose size changed after indexing is reported.
	f, _ := os.OpenFile(files[3], os.O_WRONLY|os.O_APPEND, 0)
	f.Write(make([]byte, 1024))
	f.Close()
	code, stdout, _ := run(t, "verify", idx)
	if code != ExitData || !strings.Contains(stdout, "imagenet-train-000003.tar (fid 3)") || !strings.Contains(stdout, "when indexed") {
		t.Errorf("verify after a shard grew: exit %d: %s", code, stdout)
	}
}

// TestIndexOutDirManifest: an index written elsewhere names its shards
// relative to its own directory, and finds them from there.
func TestIndexOutDirManifest(t *testing.T) {
	wds, _, payloads := webdatasetShards(t, 3)
	out := t.TempDir()
	if code, _, stderr := run(t, "index", "-q", "--out-dir", out, filepath.Join(wds, "imagenet-train-{000000..000002}.tar")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	idx := filepath.Join(out, "imagenet-train.taridx")
	m, err := fold.ReadManifest(idx)
	if err != nil || !strings.HasPrefix(m.Shards[0].Path, "../") {
		t.Fatalf("manifest %+v: %v", m, err)
	}
	code, stdout, stderr := run(t, "cat", idx, "s000007.cls")
	if code != 0 || stdout != string(payloads["s000007.cls"]) {
		t.Errorf("cat: exit %d: %s", code, stderr)
	}
	// Converting from the index alone reads the shards it names.
	bc := filepath.Join(t.TempDir(), "x.barecat")
	if code, _, stderr := run(t, "convert", "-q", idx, bc); code != 0 {
		t.Fatalf("convert: exit %d: %s", code, stderr)
	}
	code, stdout, _ = run(t, "cat", bc, "s000007.cls")
	if code != 0 || stdout != string(payloads["s000007.cls"]) {
		t.Errorf("cat of the Barecat: exit %d", code)
	}
}

// TestGLZNFoldNoManifest: glzn finds <fold>_<suffix>.tar beside the index;
// such an index gets no manifest, and a stale one goes.
func TestGLZNFoldNoManifest(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	idx := filepath.Join(dir, "train.taridx")
	os.WriteFile(fold.ManifestPath(idx), []byte(`{"kind":"itarconv-shards","version":1,"shards":[{"path":"elsewhere.tar","size":1}]}`), 0o644)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(fold.ManifestPath(idx)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("manifest left beside a glzn fold's index: %v", err)
	}
	if code, stdout, _ := run(t, "ls", idx); code != 0 || strings.Count(stdout, "\n") != 12 {
		t.Errorf("ls: exit %d: %s", code, stdout)
	}
}

func TestShardSetErrors(t *testing.T) {
	wds, _, _ := webdatasetShards(t, 2)
	// A brace pattern naming a missing shard names it.
	code, _, stderr := run(t, "index", filepath.Join(wds, "imagenet-train-{000000..000002}.tar"))
	if code == 0 || !strings.Contains(stderr, "imagenet-train-000002.tar") {
		t.Errorf("missing shard: exit %d: %s", code, stderr)
	}
	// Two spellings of one fold: the message says how to name the shards.
	os.WriteFile(filepath.Join(wds, "imagenet-train-1.tar"), nil, 0o644)
	code, _, stderr = run(t, "index", wds)
	if code != ExitData || !strings.Contains(stderr, "imagenet-train-000001.tar") || !strings.Contains(stderr, "explicitly") {
		t.Errorf("ambiguous: exit %d: %s", code, stderr)
	}
	os.Remove(filepath.Join(wds, "imagenet-train-1.tar"))
	// Shards of several folds give no one name: -o is needed.
	dir, _ := writeShards(t, 1, 1)
	code, _, stderr = run(t, "index", filepath.Join(wds, "imagenet-train-000000.tar"), filepath.Join(dir, "train_0000.tar"))
	if code != ExitUsage || !strings.Contains(stderr, "-o") {
		t.Errorf("two folds: exit %d: %s", code, stderr)
	}
}

// TestConvertShardSet: convert reads every form of shard set, and gives
// what it gives from the same shards named train_NNNN.tar.
func TestConvertShardSet(t *testing.T) {
	wds, plain, _ := webdatasetShards(t, 4)
	out := t.TempDir()
	want := filepath.Join(out, "plain.tbl")
	if code, _, stderr := run(t, "convert", "-q", plain, want); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wantBytes, _ := os.ReadFile(want)
	list := filepath.Join(out, "list.txt")
	os.WriteFile(list, []byte(filepath.Join(wds, "imagenet-train-00000{0,1}.tar")+"\n"+filepath.Join(wds, "imagenet-train-00000[23].tar")+"\n"), 0o644)
	for i, src := range [][]string{
		{wds},
		{filepath.Join(wds, "imagenet-train-{000000..000003}.tar")},
		{filepath.Join(wds, "*.tar")},
		{"@" + list},
	} {
		got := filepath.Join(out, fmt.Sprintf("got%d.tbl", i))
		if code, _, stderr := run(t, append(append([]string{"convert", "-q"}, src...), got)...); code != 0 {
			t.Fatalf("%q: exit %d: %s", src, code, stderr)
		}
		if b, _ := os.ReadFile(got); !bytes.Equal(b, wantBytes) {
			t.Errorf("%q: TBL of %d bytes differs from the plain shards' (%d)", src, len(b), len(wantBytes))
		}
	}
}

// TestStaleManifestGoes: a fold written over an index that had a manifest
// is read from its own shards, not from those the manifest named.
func TestStaleManifestGoes(t *testing.T) {
	wds, _, payloads := webdatasetShards(t, 2)
	out := filepath.Join(t.TempDir(), "out")
	os.Mkdir(out, 0o755)
	idx := filepath.Join(out, "train.taridx")
	if code, _, stderr := run(t, "index", "-q", "-o", idx, filepath.Join(wds, "imagenet-train-*.tar")); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := fold.ReadManifest(idx); err != nil {
		t.Fatalf("no manifest: %v", err)
	}
	tblPath := filepath.Join(t.TempDir(), "x.tbl")
	if code, _, stderr := run(t, "convert", "-q", wds, tblPath); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := run(t, "convert", "-q", "--force", tblPath, out); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(fold.ManifestPath(idx)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the earlier manifest is still there: %v", err)
	}
	if code, stdout, _ := run(t, "verify", idx); code != 0 {
		t.Errorf("verify: exit %d: %s", code, stdout)
	}
	if code, stdout, _ := run(t, "cat", idx, "s000003.jpg"); code != 0 || stdout != string(payloads["s000003.jpg"]) {
		t.Errorf("cat: exit %d", code)
	}
}
