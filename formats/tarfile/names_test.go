package tarfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCheckPattern: WebDataset's ShardWriter patterns with one integer
// verb are accepted; anything else is ErrNamePattern.
func TestCheckPattern(t *testing.T) {
	for _, p := range []string{"imagenet-val-%06d.tar", "%d.tar", "a_%02d.tar", "shard-%012d.tar"} {
		if err := CheckPattern(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{
		"imagenet-val.tar",         // no verb
		"a-%06d-%06d.tar",          // two
		"a-%06d.tar.gz",            // not .tar
		"a-%06d",                   // no suffix
		"d/a-%06d.tar",             // a path
		`d\a-%06d.tar`,             // a Windows path
		".a-%06d.tar",              // hidden
		"a-%s.tar",                 // not an integer verb
		"a-%6d.tar",                // spaces
		"a-%-6d.tar",               // flags
		"a-%0d.tar",                // a zero without a width
		"a-%0100d.tar",             // too wide
		"a-%06d%.tar",              // a stray '%'
		"a-%%-%06d.tar",            // "%%" is not taken either
		"a-%06x.tar",               // hex
		"a-%06d.tar\x00",           // NUL
		"a-%[1]d.tar",              // an argument index
		"a-%06d.tar" + "%",         // '%' at the end
		"a-%06d.ta" + "r/../x.tar", // a path again
	} {
		if err := CheckPattern(p); !errors.Is(err, ErrNamePattern) {
			t.Errorf("%q: %v, want ErrNamePattern", p, err)
		}
	}
	if got := PatternName("imagenet-val-%06d.tar", 12); got != "imagenet-val-000012.tar" {
		t.Errorf("PatternName: %q", got)
	}
}

// TestWriterPattern: with a pattern, the writer names its shards by it,
// as WebDataset's ShardWriter does, whatever the fold.
func TestWriterPattern(t *testing.T) {
	dir := t.TempDir()
	if _, err := Create(WriterOptions{Dir: dir, Pattern: "x-%d"}); !errors.Is(err, ErrNamePattern) {
		t.Errorf("a bad pattern: %v", err)
	}
	w, err := Create(WriterOptions{Dir: dir, Pattern: "imagenet-val-%06d.tar", ShardSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		if _, err := w.Add(Member{Name: []byte("f" + string(rune('0'+i)) + ".bin"), Typeflag: '0', Size: 1500, Mode: 0o644}, bytes.NewReader(make([]byte, 1500))); err != nil {
			t.Fatal(err)
		}
	}
	names, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) < 2 {
		t.Fatalf("%d shards: no rollover to test", len(names))
	}
	for i, n := range names {
		if want := filepath.Join(dir, PatternName("imagenet-val-%06d.tar", i)); n != want {
			t.Errorf("shard %d: %s, want %s", i, n, want)
		}
		if _, err := os.Stat(n); err != nil {
			t.Error(err)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != len(names) {
		t.Errorf("%d files in the directory, %d shards", len(ents), len(names))
	}
}
