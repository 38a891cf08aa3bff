package convert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/testing/testutil"
)

// Cases whose shards hold only regular files with extensions and short
// names: there the default mode writes exactly what glzn wrote.
var glznIdentical = []string{
	"ustar_basic", "many_ext", "duplicates", "noncontiguous", "sizes_boundary",
	"size_field_variants", "shard_naming", "concatenated", "ustar_encodings_py",
	"empty_shard_first",
}

type expectedCase struct {
	Folds map[string]struct {
		Shards  []string `json:"shards_in_fid_order"`
		Members map[string][]struct {
			Name       string `json:"name"`
			Type       string `json:"type"`
			Size       int64  `json:"size"`
			DataOffset int64  `json:"data_offset"`
		} `json:"tarfile_members"`
		TaridxFile string `json:"taridx_file"`
	} `json:"folds"`
}

func loadExpected(t *testing.T, dir string) expectedCase {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e expectedCase
	if err := json.Unmarshal(raw, &e); err != nil {
		t.Fatal(err)
	}
	return e
}

func conformanceCases(t *testing.T) (string, []string) {
	root := testutil.Conformance(t, "taridx")
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var cases []string
	for _, e := range entries {
		if e.IsDir() {
			cases = append(cases, e.Name())
		}
	}
	if len(cases) < 20 {
		t.Fatalf("only %d conformance cases in %s", len(cases), root)
	}
	return root, cases
}

func buildFold(t *testing.T, shards []string, out string, opts fold.IndexOptions) *fold.IndexStats {
	t.Helper()
	st, err := fold.BuildIndex(context.Background(), shards, out, opts)
	if err != nil {
		t.Fatalf("BuildIndex: %v", err)
	}
	return st
}

// TestConformanceCompatGLZN: --compat glzn writes glzn's bytes for every case
// where glzn wrote an index; after an empty shard, glzn's fids are shifted
// down by one and ours are the shard's position.
func TestConformanceCompatGLZN(t *testing.T) {
	root, cases := conformanceCases(t)
	compared := 0
	for _, c := range cases {
		dir := filepath.Join(root, c)
		folds, err := taridx.Discover(dir)
		if c == "bad_naming" {
			if !errors.Is(err, taridx.ErrShardName) {
				t.Errorf("bad_naming: got %v, want ErrShardName", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		for _, f := range folds {
			want, err := os.ReadFile(f.IndexPath(dir))
			if err != nil {
				continue // glzn refused this case
			}
			for _, workers := range []int{1, 3} {
				out := filepath.Join(t.TempDir(), f.Name+".taridx")
				buildFold(t, f.Shards, out, fold.IndexOptions{CompatGLZN: true, Workers: workers})
				got, _ := os.ReadFile(out)
				ref := want
				if c == "empty_shard_middle" {
					ref = shiftGLZNFids(t, want, got)
				}
				if !bytes.Equal(got, ref) {
					t.Errorf("%s/%s (workers=%d): output differs from glzn's (%d vs %d bytes)", c, f.Name, workers, len(got), len(want))
				}
			}
			compared++
		}
	}
	if compared < 20 {
		t.Errorf("compared only %d glzn indexes", compared)
	}
}

// shiftGLZNFids rewrites glzn's fids to shard positions, taken from ours:
// glzn numbers a shard "previous row's fid + 1", so a shard without rows
// takes no number and every later shard gets its predecessor's.
func shiftGLZNFids(t *testing.T, glzn, ours []byte) []byte {
	x, err := taridx.Parse("glzn", glzn)
	if err != nil {
		t.Fatal(err)
	}
	y, err := taridx.Parse("ours", ours)
	if err != nil {
		t.Fatal(err)
	}
	var used []uint16 // our fids that have rows, in order
	for i := 0; i < y.Len(); i++ {
		if f := y.Row(i).Fid; len(used) == 0 || used[len(used)-1] != f {
			used = append(used, f)
		}
	}
	out := slices.Clone(glzn)
	off := int(x.Header.OffArr)
	for i := 0; i < x.Len(); i++ {
		r := x.Row(i)
		r.Fid = used[r.Fid]
		taridx.PutRow(out[off+i*taridx.RecordSize:], r)
	}
	if bytes.Equal(out, glzn) {
		t.Fatal("empty_shard_middle: expected glzn's fids to be shifted")
	}
	return out
}

// TestConformanceDefault: the default mode is byte-identical to glzn on the
// cases made of plain files, and elsewhere lists exactly the regular members
// with an extension that Python's tarfile sees, at their offsets.
func TestConformanceDefault(t *testing.T) {
	root, cases := conformanceCases(t)
	for _, c := range cases {
		if c == "bad_naming" {
			continue
		}
		dir := filepath.Join(root, c)
		folds, err := taridx.Discover(dir)
		if err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		exp := loadExpected(t, dir)
		for _, f := range folds {
			out := filepath.Join(t.TempDir(), f.Name+".taridx")
			st := buildFold(t, f.Shards, out, fold.IndexOptions{Workers: 2})
			got, _ := os.ReadFile(out)
			if slices.Contains(glznIdentical, c) {
				want, err := os.ReadFile(f.IndexPath(dir))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s/%s: default output differs from glzn's", c, f.Name)
				}
			}
			x, err := taridx.Parse(out, got)
			if err != nil {
				t.Fatalf("%s: reading our index: %v", c, err)
			}
			ef := exp.Folds[f.Name]
			type want struct {
				fid          int
				offset, size int64
				stem, ext    string
			}
			var wants []want
			for fid, shard := range ef.Shards {
				for _, m := range ef.Members[shard] {
					if m.Type != "0" && m.Type != "\x00" && m.Type != "7" {
						continue // Python's tarfile's regular types, but sparse
					}
					name := m.Name
					if strings.Contains(name, `\x`) {
						name = "" // tarfile shows undecodable bytes escaped
					}
					stem, ext := taridx.SplitName(name, taridx.StemBasename)
					if name != "" && (ext == "" || taridx.HasPySpace(ext)) {
						continue
					}
					wants = append(wants, want{fid, m.DataOffset - 512, m.Size, stem, ext})
				}
			}
			if x.Len() != len(wants) {
				t.Errorf("%s/%s: %d rows, tarfile has %d regular members with extensions (stats %+v)", c, f.Name, x.Len(), len(wants), st)
				continue
			}
			for i, w := range wants {
				r := x.Row(i)
				if int(r.Fid) != w.fid || int64(r.Offset) != w.offset || int64(r.Size) != w.size {
					t.Errorf("%s row %d: got fid %d offset %d size %d, want %+v", c, i, r.Fid, r.Offset, r.Size, w)
				}
				if w.stem != "" || w.ext != "" {
					if r.KeyHash != taridx.KeyHash(w.stem) || x.Exts[r.ExtID] != w.ext {
						t.Errorf("%s row %d: key/ext %x %q, want stem %q ext %q", c, i, r.KeyHash, x.Exts[r.ExtID], w.stem, w.ext)
					}
				}
			}
		}
	}
}
