package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStdoutWriteFailure: a command whose standard output refuses its
// writes (a full disk) fails with exit 3 naming standard output, whichever
// command wrote; before, ls and text inspect exited 0 (an unchecked
// deferred Flush).
func TestStdoutWriteFailure(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full:", err)
	}
	defer full.Close()
	dir, _ := writeShards(t, 2, 3)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	idx := filepath.Join(dir, "train.taridx")
	for _, args := range [][]string{
		{"ls", idx},
		{"inspect", idx},
		{"inspect", "--json", idx},
		{"verify", dir},
		{"cat", idx, "s000000.jpg"},
		{"convert", "-q", dir, "-"},
	} {
		var stderr bytes.Buffer
		code := Main(args, full, &stderr)
		if code != ExitIO || !strings.Contains(stderr.String(), "writing standard output") {
			t.Errorf("%q into /dev/full: exit %d, %q; want %d naming standard output", args, code, stderr.String(), ExitIO)
		}
	}
}

// TestClosedStdout: `itarconv convert X.tar.gz - | head` ends cleanly when
// head goes away: exit 141, no message, and no decompressed copy left in
// $TMPDIR (before, the process died of SIGPIPE with the copy left there).
func TestClosedStdout(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	plain, _ := writeShards(t, 2, 200)
	z := compressShards(t, plain, "gzip", ".tar.gz")
	if code, _, stderr := run(t, "index", "-q", plain); code != 0 {
		t.Fatalf("index: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{
		{"convert", "-q", z, "-"},
		{"ls", filepath.Join(plain, "train.taridx")},
	} {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		r.Close()
		var stderr bytes.Buffer
		code := Main(args, w, &stderr)
		w.Close()
		if code != ExitClosedOutput || stderr.Len() != 0 {
			t.Errorf("%q into a closed pipe: exit %d, %q; want %d and no message", args, code, stderr.String(), ExitClosedOutput)
		}
		if left, _ := os.ReadDir(tmp); len(left) != 0 {
			t.Errorf("%q left %d entries in $TMPDIR, e.g. %s", args, len(left), left[0].Name())
		}
	}
}

func TestReportPanic(t *testing.T) {
	var stderr bytes.Buffer
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if code := reportPanic(&stderr, getenv, "index out of range\n[3]", []byte("goroutine 1 [running]:\n")); code != ExitData {
		t.Errorf("exit %d, want %d", code, ExitData)
	}
	if got := stderr.String(); got != "itarconv: internal error: index out of range [3] (set ITARCONV_DEBUG=1 for its stack trace)\n" {
		t.Errorf("message %q", got)
	}
	stderr.Reset()
	env[debugVariable] = "1"
	reportPanic(&stderr, getenv, "boom", []byte("goroutine 1 [running]:\n"))
	if !strings.Contains(stderr.String(), "goroutine 1 [running]") {
		t.Errorf("with %s set, no stack: %q", debugVariable, stderr.String())
	}
}
