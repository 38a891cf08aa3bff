package tbl

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/registry"
)

// TestVerifyCancelled: Verify, the file's and the format's, stops with the
// caller's context rather than reading every sample; so do Inspect and List.
func TestVerifyCancelled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.tbl")
	w, err := Create(path, WriterOptions{Version: 2, NumSamples: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a", "bc", "def"} {
		if err := w.Add(JPEG, strings.NewReader(s), int64(len(s)), []MetaEntry{NameMeta(s + ".jpg")}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.VerifyContext(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Reader.VerifyContext: %v, want context.Canceled", err)
	}
	if err := r.VerifyContext(context.Background()); err != nil {
		t.Errorf("Reader.VerifyContext: %v", err)
	}
	if _, err := Verify(ctx, path); !errors.Is(err, context.Canceled) || errors.Is(err, registry.ErrVerify) {
		t.Errorf("Verify: %v, want context.Canceled (and no damage reported)", err)
	}
	if _, err := Inspect(ctx, path); !errors.Is(err, context.Canceled) {
		t.Errorf("Inspect: %v, want context.Canceled", err)
	}
	d, err := open([]string{path}, registry.OpenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.List(ctx, func(registry.Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v, want context.Canceled", err)
	}
}
