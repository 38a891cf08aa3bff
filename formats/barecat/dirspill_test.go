package barecat

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeDirsArchive writes files in many directories, explicit directories
// with metadata (before and after their files, empty ones, the root), and
// returns the dirs table's rows as text.
func writeDirsArchive(t *testing.T, treeDirs int, rootMeta bool) (string, error) {
	t.Helper()
	old := maxTreeDirs
	maxTreeDirs = treeDirs
	defer func() { maxTreeDirs = old }()
	out := filepath.Join(t.TempDir(), "x.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	w.rootMeta = Dir{Mode: 0o700, HasMode: true, UID: 5, HasUID: true} // fixed, for the comparison
	meta := func(p string, mode int64) Dir {
		return Dir{Path: p, Mode: mode, HasMode: true, UID: 7, HasUID: true, GID: 8, HasGID: true, MtimeNs: 99, HasMtime: true}
	}
	if err := w.AddDir(meta("a", 0o750)); err != nil {
		t.Fatal(err)
	}
	if rootMeta {
		if err := w.AddDir(meta("", 0o755)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 300 {
		p := fmt.Sprintf("a/s%03d/%d/f.bin", i, i%3)
		if i%50 == 7 {
			p = fmt.Sprintf("b!/x%03d.bin", i) // '!' sorts before '/'
		}
		if err := w.Add(File{Path: p, Size: int64(i % 5)}, strings.NewReader(strings.Repeat("z", i%5))); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []Dir{meta("a/s010", 0o711), meta("empty/deep/er", 0o700), meta("b", 0o755)} {
		if err := w.AddDir(d); err != nil {
			t.Fatal(err)
		}
	}
	wantErr(t, w.AddDir(meta("a/s010", 0o711)), ErrDuplicate)
	wantErr(t, w.AddDir(meta("a", 0o711)), ErrDuplicate)
	if err := w.Close(); err != nil {
		return "", err
	}
	a := mustOpen(t, out)
	defer a.Close()
	rep, err := a.Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v %v", err, rep.Problems)
	}
	var b strings.Builder
	for _, d := range allDirs(t, a) {
		fmt.Fprintf(&b, "%+v\n", d)
	}
	if n, _ := a.NumFiles(); n != 300 {
		t.Errorf("%d files", n)
	}
	return b.String(), nil
}

// TestWriterSpilledDirs: past its limit of directories in memory, the
// Writer computes the dirs table in SQL: the same rows as the tree gives.
func TestWriterSpilledDirs(t *testing.T) {
	for _, root := range []bool{false, true} {
		want, err := writeDirsArchive(t, 1<<16, root)
		if err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 5, 200} {
			got, err := writeDirsArchive(t, limit, root)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Errorf("root %v, limit %d: dirs\n%s\nwant\n%s", root, limit, got, want)
			}
		}
		// root, a, 294 a/sNNN and as many a/sNNN/k, b!, b, empty/deep/er and its 2 parents
		if n := strings.Count(want, "\n"); n != 1+1+294+294+1+1+3 {
			t.Errorf("%d directories", n)
		}
	}
}

// TestWriterUnfilteredConflict: without the filter of paths (a memory
// budget too small for it), a path that is a file and then a directory of
// other files is refused at Close, found among the files the Writer
// logged, in memory or spilled to runs, and nothing is left; with the
// directories spilled too, and a file where a directory is, as well. A
// file where a directory is is refused at once while the directories are
// in memory, whatever the budget.
func TestWriterUnfilteredConflict(t *testing.T) {
	for _, c := range []struct{ at, treeDirs int }{{0, 1 << 16}, {1500, 1 << 16}, {2999, 1 << 16}, {0, 2}, {2999, 2}, {-1, 2}} {
		old := maxTreeDirs
		maxTreeDirs = c.treeDirs
		defer func() { maxTreeDirs = old }()
		at := c.at
		dir := t.TempDir()
		out := filepath.Join(dir, "x.barecat")
		w, err := Create(out, WriterOptions{Memory: 1})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 3000 {
			p := fmt.Sprintf("d%d/f%04d", i%7, i)
			if i == at {
				p = "a/b/c"
			}
			if err := w.Add(File{Path: p, Size: 1}, strings.NewReader("1")); err != nil {
				t.Fatal(err)
			}
		}
		w.submit()
		w.sync()
		if len(w.log.runs) != 2 {
			t.Errorf("the log spilled %d runs, want 2", len(w.log.runs))
		}
		want := "a/b/c"
		if c.treeDirs > 2 {
			wantErr(t, w.Add(File{Path: "d3", Size: 1}, strings.NewReader("1")), ErrConflict)
		} else if at < 0 {
			// Spilled: found by Close.
			if err := w.Add(File{Path: "d3", Size: 1}, strings.NewReader("1")); err != nil {
				t.Fatal(err)
			}
			want = "d3"
		}
		if want == "a/b/c" {
			if err := w.Add(File{Path: "a/b/c/d.bin", Size: 1}, strings.NewReader("1")); err != nil {
				t.Fatal(err)
			}
		}
		err = w.Close()
		if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), `"`+want+`"`) {
			t.Fatalf("%+v: got %v, want ErrConflict naming %s", c, err, want)
		}
		if m, _ := filepath.Glob(filepath.Join(dir, "*")); len(m) != 0 {
			t.Errorf("left behind: %v", m)
		}
	}
}

// TestVerifySortedDirs: with more directories than it keeps in memory,
// Verify walks two sorted queries instead: the same problems are found,
// on a sound archive (none) and on one with wrong counters, a directory
// of files without a row and a directory whose parent has none.
func TestVerifySortedDirs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "x.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		p := fmt.Sprintf("a/s%03d/%d/f.bin", i, i%3)
		if i%50 == 7 {
			p = fmt.Sprintf("b!/x%03d.bin", i)
		}
		if err := w.Add(File{Path: p, Size: int64(i % 5)}, strings.NewReader(strings.Repeat("z", i%5))); err != nil {
			t.Fatal(err)
		}
	}
	w.Add(File{Path: "top.bin", Size: 2}, strings.NewReader("zz"))
	w.AddDir(Dir{Path: "empty/deep/er"})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	problems := func(limit int) []string {
		old := maxTreeDirs
		maxTreeDirs = limit
		defer func() { maxTreeDirs = old }()
		a := mustOpen(t, out)
		defer a.Close()
		rep, err := a.Verify(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var ps []string
		for _, p := range rep.Problems {
			ps = append(ps, p.Error())
		}
		slices.Sort(ps)
		ps = append(ps, fmt.Sprintf("%d files, %d dirs", rep.Files, rep.Dirs))
		return ps
	}
	if got := problems(1); len(got) != 1 {
		t.Fatalf("sound archive: %q", got)
	}
	execSQL(t, out,
		`UPDATE config SET value_int = 0 WHERE key = 'use_triggers'`,
		`UPDATE dirs SET num_files = 99 WHERE path = 'a/s005'`,
		`UPDATE dirs SET size_tree = 1 WHERE path = 'a'`,
		`UPDATE dirs SET num_subdirs = 0 WHERE path = ''`,
		`DELETE FROM dirs WHERE path = 'a/s007/1'`,
		`DELETE FROM dirs WHERE path = 'empty/deep'`,
		`UPDATE config SET value_int = 1 WHERE key = 'use_triggers'`,
	)
	want, got := problems(1<<16), problems(1)
	if !slices.Equal(got, want) || len(want) < 6 {
		t.Errorf("sorted walk:\n%s\nin memory:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestFileLogCompact: the log's runs, spilled as files come, merged in
// levels as lookups need them, give the latest entry of every path, old
// and new alike, and those of no file none.
func TestFileLogCompact(t *testing.T) {
	l := newFileLog(t.TempDir(), "x", 1)
	defer l.close()
	const n = 40 * 1024
	h := func(i int) uint64 { return uint64(i%(n/2))*0x9E3779B97F4A7C15 | 1 }
	for i := range n {
		// Each hash twice: the second entry (offset i) is the latest.
		if err := l.add(logEntry{hash: h(i), offset: int64(i), size: 1}); err != nil {
			t.Fatal(err)
		}
		if i%5000 == 4999 {
			for _, k := range []int{0, i / 2, i} {
				want := int64(k % (n / 2))
				if i >= n/2+k%(n/2) {
					want += n / 2
				}
				if e, ok, err := l.find(h(k)); err != nil || !ok || e.offset != want {
					t.Fatalf("after %d: hash of %d: %v %v %v, want offset %d", i, k, e, ok, err, want)
				}
			}
		}
	}
	for k := range n / 2 {
		e, ok, err := l.find(h(k))
		if err != nil || !ok || e.offset != int64(k+n/2) {
			t.Fatalf("hash of %d: %v %v %v, want offset %d", k, e, ok, err, k+n/2)
		}
	}
	if _, ok, _ := l.find(2); ok {
		t.Fatal("found a hash never logged")
	}
	levels := map[int]int{}
	for _, r := range l.runs {
		levels[r.level]++
	}
	if len(l.runs) > 2*logFanout || levels[1] == 0 {
		t.Fatalf("%d runs, by level %v", len(l.runs), levels)
	}
}
