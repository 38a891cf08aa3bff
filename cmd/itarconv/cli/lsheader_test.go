package cli

import (
	"bytes"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// lsOnTerminal runs ls with standard output a pseudo-terminal, and returns
// its lines.
func lsOnTerminal(t *testing.T, path string) []string {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	read := make(chan string)
	go func() {
		var out bytes.Buffer
		io.Copy(&out, ptmx) // ends with EIO once tty is closed
		read <- out.String()
	}()
	var stderr bytes.Buffer
	code := Main([]string{"ls", path}, tty, &stderr)
	tty.Close()
	out := <-read
	if code != 0 {
		t.Fatalf("ls %s: exit %d: %s", path, code, stderr.String())
	}
	return strings.Split(strings.TrimSpace(strings.ReplaceAll(out, "\r\n", "\n")), "\n")
}

// TestLsHeader: on a terminal, ls heads its columns; piped, it prints the
// rows alone, for scripts.
func TestLsHeader(t *testing.T) {
	dir, _ := writeShards(t, 2, 3)
	if code, _, stderr := run(t, "index", "-q", dir); code != 0 {
		t.Fatal(stderr)
	}
	idx := filepath.Join(dir, "train.taridx")
	lines := lsOnTerminal(t, idx)
	if len(lines) != 13 || lines[0] != "fold\tshard\toffset\tsize\tname" || !strings.HasPrefix(lines[1], "train\ttrain_0000.tar\t0\t") {
		t.Errorf("ls on a terminal: %q", lines)
	}
	if _, stdout, _ := run(t, "ls", idx); strings.Count(stdout, "\n") != 12 || strings.HasPrefix(stdout, "fold") {
		t.Errorf("ls piped: %q", stdout)
	}

	bc := filepath.Join(t.TempDir(), "x.barecat")
	if code, _, stderr := run(t, "convert", "-q", dir, bc); code != 0 {
		t.Fatal(stderr)
	}
	lines = lsOnTerminal(t, bc)
	if len(lines) != 13 || !strings.HasPrefix(lines[0], "name\t") || !strings.HasSuffix(lines[0], "\tsize") {
		t.Errorf("ls of a Barecat on a terminal: %q", lines)
	}
}
