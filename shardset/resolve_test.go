package shardset

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// TestResolveInfo: ResolveInfo gives os.Lstat's word on the names it
// looked at (a link as a link), nil for a glob's matches and URLs, and
// the same shards as ResolveContext.
func TestResolveInfo(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.tar"), filepath.Join(dir, "b.tar")
	os.WriteFile(a, []byte("12345"), 0o644)
	os.WriteFile(b, nil, 0o644)
	os.WriteFile(filepath.Join(dir, "c.tar"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "d.tar"), nil, 0o644)
	link := filepath.Join(dir, "l.tar")
	if err := os.Symlink(a, link); err != nil {
		t.Skip(err)
	}
	args := []string{a, link, filepath.Join(dir, "{b,d}.tar"), filepath.Join(dir, "[c]*.tar"), "https://example.com/x.tar"}
	shards, infos, err := ResolveInfo(context.Background(), args)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := ResolveContext(context.Background(), args)
	if !slices.Equal(shards, want) || len(infos) != len(shards) {
		t.Fatalf("ResolveInfo %v (%d infos), ResolveContext %v", shards, len(infos), want)
	}
	if infos[0] == nil || infos[0].Size() != 5 || !infos[0].Mode().IsRegular() {
		t.Errorf("an existing file: %v", infos[0])
	}
	if infos[1] == nil || infos[1].Mode()&fs.ModeSymlink == 0 {
		t.Errorf("a link: %v, want the link's own", infos[1])
	}
	if infos[2] == nil || infos[2].Name() != "b.tar" || infos[3] == nil || infos[3].Name() != "d.tar" {
		t.Errorf("a brace pattern's names: %v, %v", infos[2], infos[3])
	}
	if infos[4] != nil || infos[5] != nil {
		t.Errorf("a glob's match and a URL: %v, %v, want nil", infos[4], infos[5])
	}
}

// TestResolveKnown: an argument the caller stat'ed is taken as it said,
// not stat'ed again (a name no file has resolves, with the caller's
// info); one it did not is resolved as ResolveInfo resolves it, and a
// shard given twice is refused all the same.
func TestResolveKnown(t *testing.T) {
	dir := t.TempDir()
	a, gone := filepath.Join(dir, "a.tar"), filepath.Join(dir, "gone.tar")
	os.WriteFile(a, []byte("12345"), 0o644)
	os.WriteFile(gone, []byte("1234567"), 0o644)
	fiGone, err := os.Lstat(gone)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(gone)
	list := filepath.Join(dir, "list")
	os.WriteFile(list, []byte("a.tar\n"), 0o644)
	shards, infos, err := ResolveKnown(context.Background(), []string{gone, "@" + list}, []fs.FileInfo{fiGone, nil})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shards, []string{gone, a}) || infos[0] != fiGone || infos[1] == nil || infos[1].Size() != 5 {
		t.Errorf("ResolveKnown = %v, %v; want the known name with its info, then the list's shard stat'ed", shards, infos)
	}
	_, _, err = ResolveKnown(context.Background(), []string{a, a}, []fs.FileInfo{infos[1], infos[1]})
	if !errors.Is(err, pathguard.ErrSameInput) {
		t.Errorf("a known shard given twice: %v, want pathguard.ErrSameInput", err)
	}
}

// TestResolveListAhead: a list of hundreds of lines, whose names are
// stat'ed in batches ahead of their turn, resolves as each line would in
// turn: in order, with each name's os.Lstat (a link as a link), globs,
// braces and URLs among them; and of two mistakes, the earlier line's is
// refused, whichever kind each is.
func TestResolveListAhead(t *testing.T) {
	dir := t.TempDir()
	const n = 300
	var lines, want []string
	for i := range n {
		name := fmt.Sprintf("s%05d.tar", i)
		os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte{1}, i%7), 0o644)
		lines = append(lines, name)
		want = append(want, filepath.Join(dir, name))
	}
	os.WriteFile(filepath.Join(dir, "g1.tar"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "b1.tar"), nil, 0o644)
	os.WriteFile(filepath.Join(dir, "b2.tar"), nil, 0o644)
	if err := os.Symlink(filepath.Join(dir, "s00000.tar"), filepath.Join(dir, "link.tar")); err != nil {
		t.Skip(err)
	}
	lines = append(lines, "# a comment", "", "g[1].tar", "b{1,2}.tar", "link.tar", "https://example.com/x.tar")
	want = append(want, filepath.Join(dir, "g1.tar"), filepath.Join(dir, "b1.tar"), filepath.Join(dir, "b2.tar"), filepath.Join(dir, "link.tar"), "https://example.com/x.tar")
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	shards, infos, err := ResolveInfo(context.Background(), []string{"@" + list})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(shards, want) {
		t.Fatalf("%d shards, want %d in order", len(shards), len(want))
	}
	for i := range n {
		if infos[i] == nil || infos[i].Name() != filepath.Base(want[i]) || infos[i].Size() != int64(i%7) {
			t.Fatalf("line %d: %v", i+1, infos[i])
		}
	}
	if infos[n] != nil || infos[n+1] == nil || infos[n+2] == nil || infos[n+3] == nil || infos[n+3].Mode()&fs.ModeSymlink == 0 || infos[n+4] != nil {
		t.Errorf("a glob's match, a brace's names, a link, a URL: %v %v %v %v %v", infos[n], infos[n+1], infos[n+2], infos[n+3], infos[n+4])
	}

	// Two mistakes: the earlier line's is the one refused.
	for _, c := range []struct {
		at   map[int]string
		line int
		is   error
	}{
		{map[int]string{100: "missing.tar", 280: "@other"}, 101, fs.ErrNotExist},
		{map[int]string{100: "@other", 280: "missing.tar"}, 101, ErrListInList},
		{map[int]string{280: "s00002.tar"}, 281, pathguard.ErrSameInput},
	} {
		bad := slices.Clone(lines[:n])
		for i, s := range c.at {
			bad[i] = s
		}
		os.WriteFile(list, []byte(strings.Join(bad, "\n")+"\n"), 0o644)
		_, err := Resolve([]string{"@" + list})
		if !errors.Is(err, c.is) || !strings.Contains(err.Error(), fmt.Sprintf("%s:%d:", list, c.line)) {
			t.Errorf("%v: %v, want %v at line %d", c.at, err, c.is, c.line)
		}
	}
}

// BenchmarkResolveList resolves an @LIST of 2,000 shards, their names
// lstat'ed several at a time (atonce) and, the baseline in the same run,
// one at a time (serial). Where a stat is a round trip (a network file
// system), the ratio is the width; here, page cache warm, it is the CPUs'.
func BenchmarkResolveList(b *testing.B) {
	dir := b.TempDir()
	var lines []string
	for i := range 2000 {
		name := fmt.Sprintf("s%05d.tar", i)
		os.WriteFile(filepath.Join(dir, name), nil, 0o644)
		lines = append(lines, name)
	}
	list := filepath.Join(dir, "list.txt")
	os.WriteFile(list, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	defer func(w int) { statWidth = w }(statWidth)
	for _, c := range []struct {
		name  string
		width int
	}{{"serial", 1}, {"atonce", statWidth}} {
		b.Run(c.name, func(b *testing.B) {
			statWidth = c.width
			for b.Loop() {
				if _, err := Resolve([]string{"@" + list}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
