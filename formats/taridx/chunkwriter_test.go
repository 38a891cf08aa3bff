package taridx

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestChunkWriterClosedAtOnce: a chunk writer closed before its goroutine
// has started (an index with nothing to write there) still returns; the
// goroutine once read the queue after close had taken it away, and both
// waited for ever.
func TestChunkWriterClosedAtOnce(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 20000 {
			c := newChunkWriter(f, 0, 64, func(int64) {})
			if err := c.close(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("a chunk writer closed at once did not return")
	}
}
