package main

import (
	"archive/tar"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestWriteLarge reads a generated shard back with archive/tar: the
// headers where they belong, the payloads whole and zero, a clean end.
func TestWriteLarge(t *testing.T) {
	for _, tc := range []struct {
		member, shard int64
		members       int
	}{
		{1000, 4096, 3},          // 512+1024 bytes a member: 2.7
		{1 << 20, 100, 1},        // at least one member
		{64 << 10, 256 << 10, 4}, // a few KiB over the shard size, as 64 MiB in 256 MiB
		{4096, 1 << 20, 228},     // 4608 bytes a member: 228.0
	} {
		p := filepath.Join(t.TempDir(), "s.tar")
		if err := writeLarge(p, 2, tc.member, tc.shard); err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(f)
		var names []string
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("member %d: %v", len(names), err)
			}
			b, err := io.ReadAll(tr)
			if err != nil || int64(len(b)) != tc.member || h.Size != tc.member {
				t.Fatalf("member %s: %d bytes (header %d), %v; want %d", h.Name, len(b), h.Size, err, tc.member)
			}
			for _, c := range b {
				if c != 0 {
					t.Fatalf("member %s: a byte %d", h.Name, c)
				}
			}
			names = append(names, h.Name)
		}
		f.Close()
		// Shard 2: numbered on from the members of shards 0 and 1.
		if first := fmt.Sprintf("s%07d.bin", 2*tc.members); len(names) != tc.members || names[0] != first {
			t.Errorf("member %d, shard %d: members %v, want %d from %s", tc.member, tc.shard, names, tc.members, first)
		}
	}
}

func TestParseSize(t *testing.T) {
	for s, want := range map[string]int64{"4096": 4096, "512KiB": 512 << 10, "64MiB": 64 << 20, "1GiB": 1 << 30, "0": -1, "x": -1, "4MB": -1} {
		got, err := parseSize(s)
		if want < 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %d, want an error", s, got)
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", s, got, err, want)
		}
		if back := sizeName(got); back != s && s != "4096" {
			t.Errorf("sizeName(%d) = %q, want %q", got, back, s)
		}
	}
}
