package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

func TestCommitAndAbort(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "out.bin")
	os.WriteFile(target, []byte("old"), 0o644)

	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	if b, _ := os.ReadFile(target); string(b) != "old" {
		t.Fatalf("target changed before Commit: %q", b)
	}
	f.Abort()
	if b, _ := os.ReadFile(target); string(b) != "old" || len(names(t, dir)) != 1 {
		t.Fatalf("after Abort: %q, %v", b, names(t, dir))
	}

	// Commit never replaces: the old file stays, and the new one's
	// temporary is gone.
	f, _ = Create(target)
	f.WriteString("new")
	if err := f.Commit(); !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), target) || strings.Contains(err.Error(), TempPrefix) {
		t.Fatalf("Commit over an existing file: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "old" || len(names(t, dir)) != 1 {
		t.Fatalf("after a refused Commit: %q, %v", b, names(t, dir))
	}

	f, _ = Create(target)
	f.WriteString("new")
	if err := f.CommitReplace(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // a no-op after Commit
	if b, _ := os.ReadFile(target); string(b) != "new" || len(names(t, dir)) != 1 {
		t.Fatalf("after Commit: %q, %v", b, names(t, dir))
	}
	if st, _ := os.Stat(target); st.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", st.Mode())
	}
}

func TestCreateErrorNamesTarget(t *testing.T) {
	target := filepath.Join(t.TempDir(), "missing", "out.taridx")
	_, err := Create(target)
	if err == nil || !strings.Contains(err.Error(), target) || strings.Contains(err.Error(), TempPrefix) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("got %v, want an error naming %s", err, target)
	}
}

// TestSweepLeftovers: temporary files of a process that is gone (a run
// killed with SIGKILL) are removed by the next run; those of a running
// process, and other files, are kept.
func TestSweepLeftovers(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Skip("no 'true' command to get a dead process id")
	}
	dead := cmd.Process.Pid
	leftover := fmt.Sprintf("%s%d-train.taridx-123", TempPrefix, dead)
	tagged := strings.Replace(TempName("test.taridx"), strconv.Itoa(os.Getpid())+".", strconv.Itoa(dead)+".", 1)
	tagged = strings.TrimSuffix(tagged, "*") + "789"
	// Another machine's (a task of a partitioned run sharing the
	// directory): its process id says nothing here.
	elsewhere := fmt.Sprintf("%s%d.0badf00d-test.taridx-1", TempPrefix, dead)
	mine := fmt.Sprintf("%s%d-val.taridx-456", TempPrefix, os.Getpid())
	for _, n := range []string{leftover, tagged, elsewhere, mine, "train_0000.tar", TempPrefix + "odd"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o644)
	}
	SweepLeftovers(dir)
	got := strings.Join(names(t, dir), ",")
	if strings.Contains(got, leftover) || strings.Contains(got, tagged) || !strings.Contains(got, elsewhere) || !strings.Contains(got, mine) ||
		!strings.Contains(got, "train_0000.tar") || !strings.Contains(got, TempPrefix+"odd") {
		t.Errorf("after the sweep: %s", got)
	}
}

// WriteBehind hands ranges over while the file is written; Commit still
// gives every byte, and Abort leaves nothing.
func TestWriteBehind(t *testing.T) {
	for _, commit := range []bool{true, false} {
		dir := t.TempDir()
		target := filepath.Join(dir, "out.bin")
		f, err := Create(target)
		if err != nil {
			t.Fatal(err)
		}
		chunk := make([]byte, 1<<20)
		app := f.Appender(0)
		var want []byte
		var end int64
		for i := range 3 * writeBehindStep >> 20 {
			for k := range chunk {
				chunk[k] = byte(i*7 + k)
			}
			if commit { // through an Appender
				if _, err := app.Write(chunk); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := f.Write(chunk); err != nil {
					t.Fatal(err)
				}
				f.WriteBehind(end + int64(len(chunk)))
			}
			want = append(want, chunk...)
			end += int64(len(chunk))
		}
		if canWriteBehind && (f.wb == nil || f.wb.from < 2*writeBehindStep) {
			t.Errorf("write-behind handed over up to %v of %d bytes", f.wb, end)
		}
		if !commit {
			f.Abort()
			if got := names(t, dir); len(got) != 0 {
				t.Errorf("after Abort: %v", got)
			}
			continue
		}
		if err := f.Commit(); err != nil {
			t.Fatal(err)
		}
		f.WriteBehind(end + 1) // after Commit: ignored
		got, err := os.ReadFile(target)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("committed %d bytes (%v), want %d", len(got), err, len(want))
		}
	}
}

// TestCommitExclusive: two writers of one new output at once (two runs
// given the same -o): exactly one Commit succeeds, the other is refused
// with ErrExists, and the file holds the winner's bytes whole.
func TestCommitExclusive(t *testing.T) {
	for trial := range 20 {
		dir := t.TempDir()
		target := filepath.Join(dir, "out.taridx")
		var files [2]*File
		for i := range files {
			f, err := Create(target)
			if err != nil {
				t.Fatal(err)
			}
			f.Write(bytes.Repeat([]byte{byte('a' + i)}, 4096+i))
			files[i] = f
		}
		var errs [2]error
		var wg sync.WaitGroup
		for i, f := range files {
			wg.Add(1)
			go func() { defer wg.Done(); errs[i] = f.Commit() }()
		}
		wg.Wait()
		won := -1
		for i, err := range errs {
			switch {
			case err == nil && won < 0:
				won = i
			case err == nil:
				t.Fatalf("trial %d: both commits succeeded", trial)
			case !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), target):
				t.Fatalf("trial %d: the refused commit: %v", trial, err)
			}
		}
		if won < 0 {
			t.Fatalf("trial %d: both refused: %v", trial, errs)
		}
		got, _ := os.ReadFile(target)
		if want := bytes.Repeat([]byte{byte('a' + won)}, 4096+won); !bytes.Equal(got, want) {
			t.Fatalf("trial %d: %d bytes there, not the %d of the commit that succeeded", trial, len(got), len(want))
		}
		if n := names(t, dir); len(n) != 1 {
			t.Fatalf("trial %d: left %v", trial, n)
		}
	}
}

// TestRenameByLink: the way taken where renameat2 takes no flags (and
// everywhere but Linux) refuses an existing target too, for files and
// directories, and leaves both as they were.
func TestRenameByLink(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	os.WriteFile(p("a"), []byte("a"), 0o644)
	os.WriteFile(p("b"), []byte("b"), 0o644)
	if err := renameByLink(p("a"), p("b")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("file over a file: %v", err)
	}
	if a, _ := os.ReadFile(p("a")); string(a) != "a" {
		t.Fatalf("a: %q", a)
	}
	if b, _ := os.ReadFile(p("b")); string(b) != "b" {
		t.Fatalf("b: %q", b)
	}
	if err := renameByLink(p("a"), p("c")); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(names(t, dir), ","); got != "b,c" {
		t.Fatalf("after the rename: %s", got)
	}

	for _, full := range []bool{true, false} {
		os.Mkdir(p("d1"), 0o755)
		os.WriteFile(p("d1/x"), []byte("x"), 0o644)
		os.Mkdir(p("d2"), 0o755)
		if full {
			os.WriteFile(p("d2/y"), []byte("y"), 0o644)
		}
		if err := renameByLink(p("d1"), p("d2")); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("directory over a directory (empty: %v): %v", !full, err)
		}
		if _, err := os.Stat(p("d1/x")); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(p("d2"))
		if err := renameByLink(p("d1"), p("d2")); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(p("d2/x")); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(p("d2"))
	}
}

// TestDirs: CommitDir puts a directory in place only where none is;
// ReplaceDir replaces one, or puts it in place where none is.
func TestDirs(t *testing.T) {
	dir := t.TempDir()
	p := func(n string) string { return filepath.Join(dir, n) }
	stage := func(content string) string {
		d, err := os.MkdirTemp(dir, TempName("out"))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(d, "f"), []byte(content), 0o644)
		return d
	}
	content := func() string { b, _ := os.ReadFile(p("out/f")); return string(b) }

	if err := CommitDir(stage("one"), p("out")); err != nil {
		t.Fatal(err)
	}
	second := stage("two")
	if err := CommitDir(second, p("out")); !errors.Is(err, ErrExists) || !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), p("out")) {
		t.Fatalf("CommitDir over a directory: %v", err)
	}
	if c := content(); c != "one" {
		t.Fatalf("after a refused CommitDir: %q", c)
	}
	if err := ReplaceDir(second, p("out")); err != nil {
		t.Fatal(err)
	}
	if c := content(); c != "two" || len(names(t, dir)) != 1 {
		t.Fatalf("after ReplaceDir: %q, %v", c, names(t, dir))
	}
	os.RemoveAll(p("out"))
	if err := ReplaceDir(stage("three"), p("out")); err != nil {
		t.Fatalf("ReplaceDir where none is: %v", err)
	}
	if c := content(); c != "three" || len(names(t, dir)) != 1 {
		t.Fatalf("after ReplaceDir where none was: %q, %v", c, names(t, dir))
	}
}

// TestLiveTemp: a temporary of another process running on this machine
// is told from a dead one's, this process's, and another machine's.
func TestLiveTemp(t *testing.T) {
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Skip("no 'sleep' command to get a live process id")
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	dead := exec.Command("true")
	if dead.Run() != nil {
		t.Skip("no 'true' command to get a dead process id")
	}
	as := func(pid int) string {
		return strings.Replace(strings.TrimSuffix(TempName("task-1-of-3"), "*"), strconv.Itoa(os.Getpid())+".", strconv.Itoa(pid)+".", 1) + "42"
	}
	if pid, rest, live := LiveTemp(as(cmd.Process.Pid)); !live || pid != cmd.Process.Pid || rest != "task-1-of-3-42" {
		t.Errorf("a live process's: %d %q %v", pid, rest, live)
	}
	for _, name := range []string{as(dead.Process.Pid), as(os.Getpid()), fmt.Sprintf("%s%d-task-1-of-3-1", TempPrefix, cmd.Process.Pid),
		fmt.Sprintf("%s%d.0badf00d-task-1-of-3-1", TempPrefix, cmd.Process.Pid), "task-1-of-3"} {
		if _, _, live := LiveTemp(name); live {
			t.Errorf("%s: live", name)
		}
	}
}
