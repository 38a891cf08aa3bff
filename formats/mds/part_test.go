package mds

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// sliceInput is shards [lo, hi) of an input: one task's share.
type sliceInput struct {
	in     registry.Input
	lo, hi int
}

func (s sliceInput) Rows(listing bool) (dataset.PayloadSource, error) {
	src, err := s.in.Rows(listing)
	if err != nil {
		return nil, err
	}
	return dataset.Slice(src, s.lo, s.hi)
}

// partsSample is six input shards, a sample's members split across the
// edge of two of them (and so of two tasks).
func partsSample() []formattest.Shard {
	s := append(append(formattest.Sample(), formattest.Sample()...), formattest.Sample()...)
	s[3] = append(s[3], formattest.File{Name: "edge.txt", Data: []byte("split")})
	s[4] = append(formattest.Shard{{Name: "edge.zzz", Data: []byte("other half")}}, s[4]...)
	return s
}

// TestParts: three tasks' parts merge into one dataset that reads back
// as the rows in order, the parts' shards linked (or copied, where links
// fail), renumbered, never rewritten; the parts unchanged.
func TestParts(t *testing.T) {
	in := &formattest.Rows{Shards: partsSample()}
	for _, c := range []struct {
		name string
		link func(string, string) error
		opts Options
	}{
		{"linked", os.Link, Options{}},
		{"copied", func(string, string) error { return errors.New("no links here") }, Options{Compression: "zstd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			linkFile = c.link
			defer func() { linkFile = os.Link }()
			dir := t.TempDir()
			var parts []string
			for i, r := range [][2]int{{0, 2}, {2, 4}, {4, 6}} {
				p := filepath.Join(dir, "part", string(rune('0'+i)))
				if err := os.MkdirAll(p, 0o755); err != nil {
					t.Fatal(err)
				}
				if _, err := createPart(context.Background(), sliceInput{in, r[0], r[1]}, p, registry.CreateOptions{Workers: 2, ShardSize: 700, Format: c.opts}); err != nil {
					t.Fatal(err)
				}
				parts = append(parts, p)
			}
			before := formattest.Files(formattest.ReadSample(t, "mds", filepath.Join(parts[1], partDir)))
			out := filepath.Join(dir, "out")
			res, err := mergeParts(context.Background(), parts, out, registry.CreateOptions{Format: c.opts})
			if err != nil {
				t.Fatal(err)
			}
			got := formattest.Files(formattest.ReadSample(t, "mds", out))
			want := formattest.Files(in.Shards)
			if len(got) != len(want) {
				t.Fatalf("%d members, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i].Name != want[i].Name || string(got[i].Data) != string(want[i].Data) {
					t.Fatalf("member %d: %q, want %q", i, got[i].Name, want[i].Name)
				}
			}
			ms := res.Stats.(*registry.MergedStats).Merge.(*MergeStats)
			st, _ := registry.StatsAs[*WriteStats](res)
			if st.Members != int64(len(want)) || ms.Shards < 6 || (c.name == "linked") != (ms.LinkedFiles == ms.Shards && ms.CopiedBytes == 0) {
				t.Errorf("stats %+v, merge %+v", st, ms)
			}
			if _, err := Verify(context.Background(), out); err != nil {
				t.Error(err)
			}
			after := formattest.Files(formattest.ReadSample(t, "mds", filepath.Join(parts[1], partDir)))
			if len(after) != len(before) {
				t.Error("a part changed")
			}
		})
	}
}

// TestPartsDamaged: a part whose shard is not the size its index
// records is refused, naming the file, and nothing is written.
func TestPartsDamaged(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "p0")
	os.MkdirAll(p, 0o755)
	if _, err := createPart(context.Background(), &formattest.Rows{Shards: formattest.Sample()}, p, registry.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(p, partDir, "shard.00000.mds")
	if err := os.Truncate(shard, 10); err != nil {
		t.Fatal(err)
	}
	_, err := mergeParts(context.Background(), []string{p}, filepath.Join(dir, "out"), registry.CreateOptions{})
	if !errors.Is(err, ErrCorrupt) || err == nil || !contains(err.Error(), "shard.00000.mds") {
		t.Errorf("%v, want ErrCorrupt naming the shard", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); err == nil {
		t.Error("an output was written")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
