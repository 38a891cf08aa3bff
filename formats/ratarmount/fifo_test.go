package ratarmount

import (
	"context"
	"errors"
	"os"
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

// TestReadContextCanceled: ReadContext stops with the context's error.
func TestReadContextCanceled(t *testing.T) {
	shard := bigArchive(t, 100)
	b := build(t, shard)
	fi, err := os.Stat(shard)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "a.tar.index.sqlite")
	if err := b.WriteTo(p, fi); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadContext(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if ix, err := ReadContext(ctx, p); !errors.Is(err, context.Canceled) {
		t.Errorf("ReadContext, canceled: %v, %v", ix != nil, err)
	}
}
