package registry_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/registry"
)

// A format of its own, as a new format package would register it: files
// that start with "TOY1", named .toy.
func registerToy(t *testing.T) {
	registry.Register(&registry.Format{
		Name:  "toy",
		Label: "Toy",
		Detect: func(path string) bool {
			b, err := os.ReadFile(path)
			return err == nil && strings.HasPrefix(string(b), "TOY1")
		},
		Claims: func(path string) bool { return strings.HasSuffix(path, ".toy") },
	})
	t.Cleanup(func() { registry.Unregister("toy") })
}

func TestRegistry(t *testing.T) {
	registerToy(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "a.toy")
	os.WriteFile(good, []byte("TOY1 data"), 0o644)
	damaged := filepath.Join(dir, "b.toy")
	os.WriteFile(damaged, []byte("garbage"), 0o644)
	other := filepath.Join(dir, "c.bin")
	os.WriteFile(other, []byte("garbage"), 0o644)

	if f := registry.Detect(good); f == nil || f.Name != "toy" {
		t.Errorf("Detect(good) = %v", f)
	}
	if f := registry.Detect(damaged); f != nil {
		t.Errorf("Detect(damaged) = %s", f.Name)
	}
	if f := registry.Claimed(damaged); f == nil || f.Label != "Toy" {
		t.Errorf("Claimed(damaged) = %v", f)
	}
	if f := registry.Claimed(other); f != nil {
		t.Errorf("Claimed(other) = %s", f.Name)
	}
	if !registry.Is("toy", good) || registry.Is("toy", other) || registry.Is("nope", good) {
		t.Error("Is")
	}
	if registry.Lookup("toy") == nil {
		t.Error("Lookup")
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a second registration of toy did not panic")
			}
		}()
		registerToy(t)
	}()
}
