package barecat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadAndViewFiles: ReadFiles and ViewFiles give each file's bytes, in
// either order; a flipped byte is that file's ErrCRC from both.
func TestReadAndViewFiles(t *testing.T) {
	for _, c := range []string{"basic", "multishard", "empty"} {
		a := mustOpen(t, caseIndex(t, c))
		for _, order := range []Order{ByAddress, ByPath} {
			want := allFiles(t, a, order)
			read, err := a.ReadFiles(want)
			if err != nil {
				t.Fatal(err)
			}
			views, err := a.ViewFiles(want)
			if err != nil {
				t.Fatal(err)
			}
			for i, f := range want {
				b := readAll(t, a, f)
				if !bytes.Equal(read[i], b) || !bytes.Equal(views.Data[i], b) || views.Data[i] == nil {
					t.Errorf("%s: %s differs", c, f.Path)
				}
			}
			views.Release()
			if views.Data != nil {
				t.Errorf("%s: Data still set after Release", c)
			}
			views.Release() // twice is harmless
		}
		a.Close()
	}

	a := mustOpen(t, filepath.Join(copyDir(t, confDir(t, "basic")), "basic.barecat"))
	defer a.Close()
	files := allFiles(t, a, ByAddress)
	var victim File
	for _, f := range files {
		if f.Size > 0 && f.HasCRC {
			victim = f
			break
		}
	}
	shard := a.ShardPaths()[victim.Shard]
	b, _ := os.ReadFile(shard)
	b[victim.Offset] ^= 0xff
	os.WriteFile(shard, b, 0o644)
	_, rerr := a.ReadFiles(files)
	_, verr := a.ViewFiles(files)
	for name, err := range map[string]error{"ReadFiles": rerr, "ViewFiles": verr} {
		var e *Error
		if !errors.Is(err, ErrCRC) || !errors.As(err, &e) || e.Name != victim.Path {
			t.Errorf("%s: got %v, want ErrCRC naming %s", name, err, victim.Path)
		}
	}
	if len(a.views) != 0 {
		t.Errorf("%d views live after errors", len(a.views))
	}
}

// TestViewFilesShardShrank: a shard cut short after Open is an ErrBounds
// error naming the file whose pages are gone, not a crash.
func TestViewFilesShardShrank(t *testing.T) {
	out := filepath.Join(t.TempDir(), "s.barecat")
	w, err := Create(out, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	const n, size = 16, 8 << 10
	for i := range n {
		data := bytes.Repeat([]byte{byte(i + 1)}, size)
		if err := w.Add(File{Path: fmt.Sprintf("f%02d", i), Size: size}, bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	a := mustOpen(t, out)
	defer a.Close()
	files := allFiles(t, a, ByAddress)
	if err := os.Truncate(a.ShardPaths()[0], size); err != nil {
		t.Fatal(err)
	}
	_, err = a.ViewFiles(files)
	var e *Error
	if !errors.Is(err, ErrBounds) || !errors.As(err, &e) || !strings.Contains(err.Error(), "shrank") {
		t.Fatalf("got %v, want ErrBounds: the shard shrank", err)
	}
	if e.Name == "" || e.Name == files[0].Path {
		t.Errorf("error names %q, want a file past the new end", e.Name)
	}
	// What was mapped before is unmapped by Close.
	views, err := a.ViewFiles(files[:1])
	if err != nil {
		t.Fatal(err)
	}
	if len(a.views) != 1 {
		t.Fatalf("%d views live", len(a.views))
	}
	a.Close()
	if len(views.regions) != 0 {
		t.Error("Close left a mapping")
	}
}
