//go:build unix

package compressed

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDetectFileFIFO: a FIFO is refused, not read (a read would block
// until a writer comes).
func TestDetectFileFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo.tar")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no FIFO here:", err)
	}
	done := make(chan error, 1)
	go func() { _, err := DetectFile(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil {
			t.Errorf("a FIFO was read")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("DetectFile blocks on a FIFO")
	}
}
