package ratarmount

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/itarconv/itarconv/internal/pathguard"
)

// TestReadFIFO: an index that is a FIFO is refused at once, not opened
// (which would wait for a writer for ever).
func TestReadFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.tar.index.sqlite")
	mkfifo(t, p)
	done := make(chan error, 1)
	go func() {
		_, err := Read(p)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, pathguard.ErrNotRegular) || !strings.Contains(err.Error(), p) {
			t.Errorf("Read of a FIFO: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Read of a FIFO blocks")
	}
}
