package convert

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/barecat"
)

// readArchive returns every file of the archive at path with its bytes.
func readArchive(t *testing.T, path string) map[string]string {
	t.Helper()
	a, err := barecat.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	got := map[string]string{}
	err = a.Files(context.Background(), barecat.ByPath, func(f barecat.File) error {
		b, err := a.ReadFile(f)
		got[f.Path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := a.Verify(context.Background())
	if err != nil || len(rep.Problems) != 0 {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	return got
}

// TestTarToBarecatDuplicatePolicies: paths repeated within and across
// shards, three times, and hard links to them: every policy, copied and
// wrapped, keeps the right members and counts the dropped ones exactly;
// the default refuses, naming the first two members of the path.
func TestTarToBarecatDuplicatePolicies(t *testing.T) {
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "d_0.tar"), []member{
		{name: "a.txt", typ: tar.TypeReg, body: "one"},
		{name: "b.txt", typ: tar.TypeReg, body: "b"},
		{name: "h1", typ: tar.TypeLink, link: "a.txt"},
		{name: "./a.txt", typ: tar.TypeReg, body: "two!"},
	})
	writeTar(t, filepath.Join(dir, "d_1.tar"), []member{
		{name: "c.txt", typ: tar.TypeReg, body: "cc"},
		{name: "a.txt", typ: tar.TypeReg, body: "three"},
		{name: "h2", typ: tar.TypeLink, link: "a.txt"},
		{name: "h3", typ: tar.TypeLink, link: "c.txt"},
		{name: "c.txt", typ: tar.TypeReg, body: "c2"},
	})
	shards := []string{filepath.Join(dir, "d_0.tar"), filepath.Join(dir, "d_1.tar")}

	for _, wrap := range []bool{false, true} {
		_, err := TarToBarecat(context.Background(), shards, filepath.Join(t.TempDir(), "x.barecat"), BarecatOptions{Wrap: wrap})
		// a.txt at 0 and ./a.txt after a.txt, b.txt, h1: 3 headers of 1024 bytes (pax) ...
		if !errors.Is(err, barecat.ErrDuplicatePath) || !strings.Contains(err.Error(), `"a.txt": `+shards[0]+" offset 0 and "+shards[0]+" offset ") {
			t.Fatalf("wrap=%v: got %v, want a duplicate error naming both members of a.txt", wrap, err)
		}
		for _, c := range []struct {
			policy string
			dups   int64
			want   map[string]string
		}{
			{DuplicateFirst, 3, map[string]string{"a.txt": "one", "b.txt": "b", "c.txt": "cc", "h1": "one", "h2": "one", "h3": "cc"}},
			// As extracting the tar would: each link has the bytes its
			// target had when the link came.
			{DuplicateLast, 3, map[string]string{"a.txt": "three", "b.txt": "b", "c.txt": "c2", "h1": "one", "h2": "three", "h3": "cc"}},
		} {
			out := filepath.Join(t.TempDir(), "x.barecat")
			st, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Wrap: wrap, OnDuplicate: c.policy, ShardSize: 0})
			if err != nil {
				t.Fatalf("wrap=%v %s: %v", wrap, c.policy, err)
			}
			if st.Duplicates != c.dups || st.Files != 6 || st.Hardlinks != 3 {
				t.Errorf("wrap=%v %s: %+v", wrap, c.policy, st)
			}
			if got := readArchive(t, out); fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("wrap=%v %s: %v, want %v", wrap, c.policy, got, c.want)
			}
		}
	}
}

// TestTarToBarecatHardlinkAcrossShards: a hard link whose target was
// copied into an earlier shard of the archive gets the target's bytes.
func TestTarToBarecatHardlinkAcrossShards(t *testing.T) {
	dir := t.TempDir()
	big := strings.Repeat("0123456789", 10)
	writeTar(t, filepath.Join(dir, "d_0.tar"), []member{
		{name: "big.bin", typ: tar.TypeReg, body: big},
		{name: "fill.bin", typ: tar.TypeReg, body: strings.Repeat("f", 90)},
		{name: "more.bin", typ: tar.TypeReg, body: strings.Repeat("m", 90)},
		{name: "link.bin", typ: tar.TypeLink, link: "big.bin"},
	})
	out := filepath.Join(t.TempDir(), "x.barecat")
	st, err := TarToBarecat(context.Background(), []string{filepath.Join(dir, "d_0.tar")}, out, BarecatOptions{ShardSize: 150})
	if err != nil {
		t.Fatal(err)
	}
	if st.Shards != 4 || st.Hardlinks != 1 || st.Bytes != 380 {
		t.Errorf("stats %+v", st)
	}
	if got := readArchive(t, out); got["link.bin"] != big || got["big.bin"] != big {
		t.Errorf("files %v", got)
	}
}

// TestBarecatToTarManyDirs: directories with metadata, more than a batch
// of them, all reach the tar with their modes, each before what it holds.
func TestBarecatToTarManyDirs(t *testing.T) {
	dir := t.TempDir()
	var ms []member
	for i := range 600 {
		ms = append(ms, member{name: fmt.Sprintf("d%03d/", i), typ: tar.TypeDir, mode: 0o700 + int64(i%8)})
		ms = append(ms, member{name: fmt.Sprintf("d%03d/f.bin", i), typ: tar.TypeReg, body: "x", mode: 0o644})
	}
	writeTar(t, filepath.Join(dir, "m_0.tar"), ms)
	out := filepath.Join(t.TempDir(), "x.barecat")
	if _, err := TarToBarecat(context.Background(), []string{filepath.Join(dir, "m_0.tar")}, out, BarecatOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := barecatToTar(t, out, filepath.Join(t.TempDir(), "back"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	dirs := 0
	for _, e := range readTarDir(t, st.Shards) {
		if e.typ == tar.TypeDir {
			dirs++
			var i int
			fmt.Sscanf(e.name, "d%03d/", &i)
			if e.mode != 0o700+int64(i%8) {
				t.Errorf("%s: mode %o", e.name, e.mode)
			}
		} else if !seen[filepath.Dir(e.name)+"/"] {
			t.Errorf("%s before its directory", e.name)
		}
		seen[e.name] = true
	}
	if dirs != 600 {
		t.Errorf("%d directories, want 600", dirs)
	}
}
