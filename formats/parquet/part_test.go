package parquet

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// parts writes each share as a part, in a directory of its own, and
// merges them at out.
func parts(t *testing.T, out string, shares ...[]formattest.File) *registry.Result {
	return partsSized(t, out, 0, shares...)
}

// partsSized is parts with each part's files rolled over at shardSize
// bytes of payload (0: the default).
func partsSized(t *testing.T, out string, shardSize int64, shares ...[]formattest.File) *registry.Result {
	t.Helper()
	var dirs []string
	for i, s := range shares {
		dir := filepath.Join(t.TempDir(), fmt.Sprintf("part%d", i))
		os.Mkdir(dir, 0o755)
		if _, err := createPart(context.Background(), &formattest.Rows{Shards: []formattest.Shard{s}}, dir, registry.CreateOptions{ShardSize: shardSize}); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	res, err := mergeParts(context.Background(), dirs, out, registry.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestParts: a partitioned run reads back as the members of all its
// shares, in order: parts of the dataset's columns are linked as they are,
// one whose columns differ (a column more, an integer column the other
// part stores as bytes) is written anew under the dataset's.
func TestParts(t *testing.T) {
	a := []formattest.File{f("a.cls", "1"), f("a.jpg", "\xff\xd8\xff"), f("b.cls", "2")}
	b := []formattest.File{f("c.cls", "3"), f("c.jpg", "\xff\xd8")}
	c := []formattest.File{f("d.cls", "x"), f("d.jpg", "j"), f("d.txt", "new"), f("e.txt", "t")}

	out := filepath.Join(t.TempDir(), "same")
	res := parts(t, out, a, b)
	sameFiles(t, readMembers(t, out), append(append([]formattest.File(nil), a...), b...))
	if ms := res.Stats.(*registry.MergedStats).Merge.(*MergeStats); ms.Linked != 2 || ms.Rewritten != 0 {
		t.Errorf("same columns: %+v, want 2 files linked", ms)
	}
	for i := range 2 {
		if _, err := os.Stat(filepath.Join(out, "data", HubName("train", i, 2))); err != nil {
			t.Error(err)
		}
	}

	out = filepath.Join(t.TempDir(), "differ")
	res = parts(t, out, a, c)
	sameFiles(t, readMembers(t, out), append(append([]formattest.File(nil), a...), c...))
	if ms := res.Stats.(*registry.MergedStats).Merge.(*MergeStats); ms.Linked != 1 || ms.Rewritten != 1 {
		t.Errorf("other columns: %+v, want 1 file linked, 1 part rewritten", ms)
	}
	d, err := Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, f := range d.Files() {
		feats, err := hubFeatures(f.Features())
		if err != nil || fmt.Sprint(feats) != fmt.Sprint(map[string]string{KeyColumn: "string", "cls": "binary", "jpg": "Image", "txt": "string"}) {
			t.Errorf("%s: features %v (%v): every file has the dataset's", f.Rel, feats, err)
		}
	}
}

// TestPartsOfSeveralFiles: parts of several files each, after another
// part, keep every file, in order. The merge named a part's second file
// after a name it had not written.
func TestPartsOfSeveralFiles(t *testing.T) {
	var a, b []formattest.File
	for i := range 4 {
		a = append(a, f(fmt.Sprintf("a%d.bin", i), string(make([]byte, 600))))
		b = append(b, f(fmt.Sprintf("b%d.bin", i), string(make([]byte, 700))))
	}
	out := filepath.Join(t.TempDir(), "several")
	res := partsSized(t, out, 1000, a, b)
	sameFiles(t, readMembers(t, out), append(append([]formattest.File(nil), a...), b...))
	ms := res.Stats.(*registry.MergedStats).Merge.(*MergeStats)
	if ms.Linked < 4 || ms.Rewritten != 0 {
		t.Errorf("%+v: want every part's files linked", ms)
	}
	for i := range ms.Linked {
		if _, err := os.Stat(filepath.Join(out, "data", HubName("train", i, ms.Linked))); err != nil {
			t.Error(err)
		}
	}
}
