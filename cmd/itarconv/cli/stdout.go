package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/remote"
)

// errStdout marks a failed write to standard output: the environment
// refused it (exit 3).
var errStdout = errors.New("writing standard output")

// errClosedOutput is the cause of a run cancelled because its standard
// output was closed by its reader.
var errClosedOutput = errors.New("standard output closed")

// checkedWriter keeps the first error a write to w returned and fails
// every later write with it, so that a command stops writing, and the run
// fails, once its output is gone.
type checkedWriter struct {
	w      io.Writer
	err    error
	closed func() // called once, on EPIPE
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = fmt.Errorf("%w: %w", errStdout, err)
		if errors.Is(err, syscall.EPIPE) && c.closed != nil {
			c.closed()
		}
		return n, c.err
	}
	return n, nil
}

func (c *checkedWriter) closedPipe() bool { return errors.Is(c.err, syscall.EPIPE) }

// redactingWriter passes every message through remote.RedactText.
type redactingWriter struct{ w io.Writer }

func (r redactingWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("://")) {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, remote.RedactText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// storedURLs refuses, before anything is written, a remote shard whose URL
// carries a signature or token in its query, unless --store-signed-urls:
// an index run keeps its shards' names in files (manifests, loader
// indexes, the parts of a partitioned run). User info is never kept.
func (e *env) storedURLs(shards []string) error {
	for _, s := range shards {
		if !remote.IsURL(s) {
			continue
		}
		if _, err := remote.StoredURL(s, e.storeSignedURLs); err != nil {
			return usageError{err}
		}
	}
	return nil
}

// panicError carries a panic recovered on another goroutine to Main.
type panicError = dataset.PanicError

// reportPanic prints an internal error in one line, with its stack only
// when the debug variable is set, and returns exit code 1.
func reportPanic(stderr io.Writer, getenv func(string) string, value any, stack []byte) int {
	msg := strings.ReplaceAll(fmt.Sprint(value), "\n", " ")
	fmt.Fprintf(stderr, "itarconv: internal error: %s (set %s=1 for its stack trace)\n", msg, debugVariable)
	if getenv(debugVariable) != "" {
		stderr.Write(stack)
	}
	return ExitData
}
