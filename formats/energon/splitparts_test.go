package energon

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestSplitParts: split.yaml given split parts is the one energon's
// prepare writes with --split-parts (testdata/pyyaml/parts.json, written
// by gen_parts.py from energon's own collapse and PyYAML), byte for byte.
func TestSplitParts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "pyyaml", "parts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Names     []string             `json:"names"`
		Parts     [][2]json.RawMessage `json:"parts"`
		SplitYAML string               `json:"split_yaml"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		var parts []Split
		for _, p := range c.Parts {
			var s Split
			if err := json.Unmarshal(p[0], &s.Name); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(p[1], &s.Shards); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, s)
		}
		lines := make([]shardLine, len(c.Names))
		for j, n := range c.Names {
			lines[j] = shardLine{n, 1}
		}
		got, err := splitYAML(lines, parts)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if string(got) != c.SplitYAML {
			t.Errorf("case %d: split.yaml\n%s\nwant\n%s", i, got, c.SplitYAML)
		}
	}
}

// TestWriteMetaSplits: WriteMeta writes the parts given, and ReadMeta reads
// each part's shards back; parts energon would not write are refused
// before any file is written.
func TestWriteMetaSplits(t *testing.T) {
	dir := t.TempDir()
	names := []string{"a-train-0.tar", "a-train-1.tar", "a-val-0.tar"}
	shards := shardsNamed(names)
	for i := range shards {
		for j := range shards[i].Samples {
			shards[i].Samples[j] = Sample{Key: names[i] + string(rune('a'+j)), Size: 512}
		}
	}
	parts := []Split{{Name: "train", Shards: names[:2]}, {Name: "val", Shards: names[2:]}}
	if err := WriteMeta(dir, shards, MetaOptions{Splits: parts}); err != nil {
		t.Fatal(err)
	}
	m, err := ReadMeta(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []Split
	for _, s := range m.Splits {
		got = append(got, Split{Name: s.Name, Shards: s.Shards})
	}
	if !reflect.DeepEqual(got, parts) {
		t.Errorf("splits %+v, want %+v", got, parts)
	}
	for _, bad := range [][]Split{
		{{Name: "train", Shards: []string{"elsewhere.tar"}}},
		{{Name: "train", Shards: names[:1]}, {Name: "train", Shards: names[1:]}},
	} {
		dir := t.TempDir()
		err := WriteMeta(dir, shards, MetaOptions{Splits: bad})
		if !errors.Is(err, ErrSplitPart) {
			t.Errorf("%+v: err = %v, want ErrSplitPart", bad, err)
		}
		if _, err := os.Stat(filepath.Join(dir, MetaDir, IndexFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%+v: index.sqlite written: %v", bad, err)
		}
	}
}
