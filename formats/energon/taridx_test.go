package energon

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
)

// tarIdx builds a shard's index from its regular members.
func tarIdx(t *testing.T, shard string) []byte {
	t.Helper()
	var b IdxBuilder
	end, err := tarfile.Walk(shard, tarfile.Options{}, func(m *tarfile.Member) error {
		if m.IsRegular() {
			b.Add(string(m.Name), m.FirstOffset)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", shard, err)
	}
	return b.Bytes(end)
}

// TestOracle: every shard of testdata gets, byte for byte, the .tar.idx
// energon's prepare wrote for it.
func TestOracle(t *testing.T) {
	shards, _ := filepath.Glob(filepath.Join("testdata", "*", "*.tar"))
	compared := 0
	for _, shard := range shards {
		want, err := os.ReadFile(IdxPath(shard))
		if errors.Is(err, os.ErrNotExist) {
			continue // prepare could not open it
		}
		got := tarIdx(t, shard)
		if !bytes.Equal(got, want) {
			gs, ge, _ := ParseIdx(got)
			ws, we, _ := ParseIdx(want)
			t.Errorf("%s: got %v end %d, want %v end %d", shard, gs, ge, ws, we)
			continue
		}
		if _, _, err := ParseIdx(got); err != nil {
			t.Errorf("%s: ParseIdx: %v", shard, err)
		}
		compared++
	}
	if compared < 18 {
		t.Errorf("only %d indexes compared", compared)
	}
}

func TestSplitName(t *testing.T) {
	tests := []struct {
		name, key, part string
		ok              bool
	}{
		{"a/b.c.jpg", "a/b", "c.jpg", true},
		{"d.x/y.jpg", "d.x/y", "jpg", true},
		{"x..y", "x", ".y", true},
		{"noext", "", "", false},
		{".hidden", "", "", false},
		{"__key__", "", "", false},
		{"__meta__/x.json", "", "", false},
		{"a/__key__.txt", "a/__key__", "txt", true},
	}
	for _, tt := range tests {
		k, p, ok := SplitName(tt.name)
		if k != tt.key || p != tt.part || ok != tt.ok {
			t.Errorf("SplitName(%q) = %q, %q, %v", tt.name, k, p, ok)
		}
	}
}

func TestIdxPath(t *testing.T) {
	for shard, want := range map[string]string{
		"d/train_0000.tar": "d/train_0000.tar.idx",
		"d/a.b.tar":        "d/a.b.tar.idx",
		"d/.hidden":        "d/.hidden.tar.idx",
		"noext":            "noext.tar.idx",
	} {
		if got := IdxPath(shard); got != want {
			t.Errorf("IdxPath(%q) = %q, want %q", shard, got, want)
		}
	}
}

// FuzzParseIdx: any bytes give offsets in order, or ErrFormat.
func FuzzParseIdx(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("testdata", "*", "*.tar.idx"))
	for _, s := range seeds {
		b, _ := os.ReadFile(s)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		starts, end, err := ParseIdx(b)
		if err != nil {
			if !errors.Is(err, ErrFormat) {
				t.Fatalf("%v is not ErrFormat", err)
			}
			return
		}
		for i, s := range starts {
			if s > end || i > 0 && s <= starts[i-1] {
				t.Fatalf("starts %v, end %d", starts, end)
			}
		}
	})
}
