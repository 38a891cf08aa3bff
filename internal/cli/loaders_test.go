package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/dali"
)

// TestIndexDALI: --format all writes, from the same pass, the TARIDX the
// default writes and each shard's DALI index, whose every component
// addresses its member's payload; --out-dir takes the DALI indexes too.
func TestIndexDALI(t *testing.T) {
	dir, payloads := writeShards(t, 2, 5)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want, _ := os.ReadFile(filepath.Join(dir, "train.taridx"))
	os.Remove(filepath.Join(dir, "train.taridx"))
	if code, _, stderr := run(t, "index", "-q", "--format", "all", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "train.taridx")); !bytes.Equal(got, want) {
		t.Error("the TARIDX differs when DALI's indexes are written beside it")
	}
	seen := 0
	for _, shard := range []string{"train_0000", "train_0001"} {
		b, err := os.ReadFile(filepath.Join(dir, shard+".idx"))
		if err != nil {
			t.Fatal(err)
		}
		samples, err := dali.Parse(bytes.NewReader(b))
		if err != nil || len(samples) != 5 {
			t.Fatalf("%s.idx: %d samples, %v", shard, len(samples), err)
		}
		tarBytes, _ := os.ReadFile(filepath.Join(dir, shard+".tar"))
		for _, s := range samples {
			if len(s) != 2 || s[0].Ext != "jpg" || s[1].Ext != "cls" {
				t.Errorf("%s: sample %+v", shard, s)
			}
			for _, c := range s {
				if got := string(tarBytes[c.Offset : c.Offset+c.Size]); got != string(payloads[c.Name]) {
					t.Errorf("%s: %s at %d: not its payload", shard, c.Name, c.Offset)
				}
				seen++
			}
		}
	}
	if seen != len(payloads) {
		t.Errorf("%d components, %d members", seen, len(payloads))
	}
	// DALI alone, elsewhere: no TARIDX, the same index files.
	out := t.TempDir()
	if code, _, stderr := run(t, "index", "-q", "--format", "dali", "--out-dir", out, dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 2 || entries[0].Name() != "train_0000.idx" {
		t.Errorf("--out-dir holds %v", entries)
	}
	a, _ := os.ReadFile(filepath.Join(out, "train_0001.idx"))
	b, _ := os.ReadFile(filepath.Join(dir, "train_0001.idx"))
	if !bytes.Equal(a, b) {
		t.Error("the index in --out-dir differs")
	}
	for _, args := range [][]string{
		{"index", "--format", "energon,webdataset", dir},
		{"index", "--format", "dali", "--compat", "glzn", dir},
	} {
		if code, _, stderr := run(t, args...); code != ExitUsage || !strings.HasPrefix(stderr, "itarconv: ") {
			t.Errorf("%q: exit %d: %s", args, code, stderr)
		}
	}
}
