package scdl

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
)

// TestVerifyCanceled: Verify and Inspect stop with the context's error
// when it is canceled, rather than reading the whole archive.
func TestVerifyCanceled(t *testing.T) {
	noSync(t)
	dir := filepath.Join(t.TempDir(), "a.scdl")
	writeSynth(t, dir, synthRows(300, 5, []int{300}, []int{40}), []int{300}, []int{40}, WriterOptions{})
	if _, err := Verify(context.Background(), dir); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if rep, err := Verify(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Verify with a canceled context: %v, %v", rep, err)
	}
	if rep, err := Inspect(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("Inspect with a canceled context: %v, %v", rep, err)
	}
	if a, err := OpenContext(ctx, dir); !errors.Is(err, context.Canceled) {
		t.Errorf("OpenContext with a canceled context: %v, %v", a, err)
	}
}
