package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/internal/safefile"
)

// deadPID is a process id no process has (above the kernel's default
// pid_max, and at Linux's largest).
const deadPID = 4194303

// plant leaves in dir a temporary file and a temporary directory as a
// killed run of a process deadPID would have.
func plant(t *testing.T, dir string) []string {
	t.Helper()
	f := filepath.Join(dir, fmt.Sprintf("%s%d-train_0000.tar-123", safefile.TempPrefix, deadPID))
	d := filepath.Join(dir, fmt.Sprintf("%s%d-out-456", safefile.TempPrefix, deadPID))
	if err := os.WriteFile(f, []byte("left"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(d, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	return []string{f, d}
}

// TestLeftoversSwept: every command that writes removes, in the directory
// it writes to, the temporaries of runs that were killed. (A process sweeps
// a directory once: each case writes into its own.)
func TestLeftoversSwept(t *testing.T) {
	src := copyCase(t, "ustar_basic")
	work := t.TempDir()
	scdlSrc := scdlCase(t, "basic_50x30_f32")
	for _, c := range []struct {
		name string
		dir  string // where the leftovers are
		args []string
	}{
		{"index", src, []string{"index", "-q", src}},
		{"tar to TBL", work, []string{"convert", "-q", "--fold", "train", src, filepath.Join(work, "x.tbl")}},
		{"tar to Barecat", filepath.Join(work, "b"), []string{"convert", "-q", "--fold", "train", src, filepath.Join(work, "b", "x.barecat")}},
		{"TBL to tar", filepath.Join(work, "t"), []string{"convert", "-q", filepath.Join(work, "x.tbl"), filepath.Join(work, "t")}},
		{"SCDL to tar", filepath.Join(work, "s"), []string{"convert", "-q", scdlSrc, filepath.Join(work, "s")}},
		{"tar to SCDL", filepath.Join(work, "c"), []string{"convert", "-q", "--to", "scdl", filepath.Join(work, "s"), filepath.Join(work, "c", "back")}},
		{"bench", filepath.Join(work, "report"), []string{"bench", "-q", "--reads", "10", "--reps", "1", "--no-cold", "--formats", "tar+taridx", "--fold", "train", "--out", filepath.Join(work, "report"), src}},
	} {
		os.MkdirAll(c.dir, 0o755)
		left := plant(t, c.dir)
		if code, _, stderr := run(t, c.args...); code != 0 {
			t.Errorf("%s: exit %d: %s", c.name, code, stderr)
			continue
		}
		for _, p := range left {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s is still there", c.name, filepath.Base(p))
			}
		}
	}
}
