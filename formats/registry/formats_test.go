package registry_test

import (
	"os"
	"path/filepath"
	"testing"

	_ "github.com/itarconv/itarconv/fold"
	_ "github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	_ "github.com/itarconv/itarconv/formats/scdl"
	_ "github.com/itarconv/itarconv/formats/taridx"
	_ "github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/testing/testutil"
)

// TestFormatsDetect: each format's own files, as the reference
// implementations wrote them, are recognised as that format and no other;
// damaged ones are claimed by name.
func TestFormatsDetect(t *testing.T) {
	conf := func(set string, parts ...string) string {
		return filepath.Join(append([]string{testutil.Conformance(t, set)}, parts...)...)
	}
	dir := t.TempDir()
	junk := func(name string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte("not a file of any format, long enough to be read......"), 0o644)
		return p
	}
	os.Mkdir(filepath.Join(dir, "scdl-without-header"), 0o755)
	os.WriteFile(filepath.Join(dir, "scdl-without-header", "data.npy"), nil, 0o644)
	for _, c := range []struct {
		path            string
		detect, claimed string
	}{
		{conf("tbl", "c01_mixed", "c01_mixed.v2raw.tbl"), "tbl", "tbl"},
		{conf("tbl", "c01_mixed", "c01_mixed.v1.tbl"), "tbl", "tbl"},
		{conf("tbl", "c01_mixed", "c01_mixed.tar"), "tar", "tar"},
		{conf("barecat", "basic", "basic.barecat"), "barecat", "barecat"},
		{conf("scdl", "basic_50x30_f32", "scdl"), "scdl", "scdl"},
		{conf("taridx", "ustar_basic", "train.taridx"), "taridx", "taridx"},
		{conf("taridx", "ustar_basic", "train_0000.tar"), "tar", "tar"},
		{conf("taridx", "ustar_basic"), "", "tar"},
		{junk("x.tbl"), "", "tbl"},
		{junk("x.barecat"), "", "barecat"},
		{junk("x.taridx"), "", "taridx"},
		{filepath.Join(dir, "scdl-without-header"), "", "scdl"},
		{junk("x.bin"), "", ""},
	} {
		name := func(f *registry.Format) string {
			if f == nil {
				return ""
			}
			return f.Name
		}
		if got := name(registry.Detect(c.path)); got != c.detect {
			t.Errorf("Detect(%s) = %q, want %q", c.path, got, c.detect)
		}
		if got := name(registry.Claimed(c.path)); got != c.claimed {
			t.Errorf("Claimed(%s) = %q, want %q", c.path, got, c.claimed)
		}
	}
	var names []string
	for _, f := range registry.All() {
		names = append(names, f.Name)
	}
	if len(names) != 5 {
		t.Errorf("registered: %v", names)
	}
}
