package parquet

import (
	"context"
	"github.com/itarconv/itarconv/formats/registry"
	"os"
	"path/filepath"
	"testing"
)

// FuzzOpen: no file makes opening, reading every member, verifying or
// inspecting panic or hang; seeds are the files in testdata (DuckDB's) and
// one this package writes.
func FuzzOpen(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*.parquet"))
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		p := filepath.Join(t.TempDir(), "f.parquet")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if d, err := Open(p); err == nil {
			d.List(context.Background(), func(registry.Entry) error { return nil })
			d.Close()
		}
		verify(context.Background(), p)
		inspect(context.Background(), p)
	})
}
