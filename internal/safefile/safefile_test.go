package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
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

	f, _ = Create(target)
	f.WriteString("new")
	if err := f.Commit(); err != nil {
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
