package taridx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeParts splits entries at cuts into parts, each written by a writer
// of CreatePart under opts, with its fids made local when local (the
// merge adds them back), and returns the parts to merge.
func writeParts(t *testing.T, entries []Entry, cuts []int, opts WriterOptions, local bool) []PartInput {
	t.Helper()
	var parts []PartInput
	lo := 0
	for _, hi := range append(cuts, len(entries)) {
		hi = min(max(hi, lo), len(entries))
		dir := t.TempDir()
		w, err := CreatePart(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		base := 0
		if local && hi > lo {
			base = int(entries[lo].Fid)
		}
		for _, e := range entries[lo:hi] {
			e.Fid -= uint16(base)
			if err := w.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.ClosePart(); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, PartInput{Dir: dir, FidBase: base})
		lo = hi
	}
	return parts
}

// TestMergePartsMatchesOneWriter: the TARIDX merged from parts is the one
// a single writer of every entry writes (glzn's rules spelled out,
// naiveIndex), byte for byte: crash stems found across parts and within,
// a sample cut between two parts, extensions each part meets in its own
// order, empty parts, fids rebased, stems and rows spilled.
func TestMergePartsMatchesOneWriter(t *testing.T) {
	ctx := context.Background()
	for _, n := range []int{0, 1, 5000} {
		entries := stemEntries(max(n, 2), uint64(n)+7)[:n]
		cutSets := [][]int{nil, {0}, {n / 2}, {n / 7, n / 7, n / 3, n - 1}}
		for _, contiguous := range []bool{false, true} {
			want := naiveIndex(entries, contiguous)
			for ci, cuts := range cutSets {
				for _, opts := range []WriterOptions{{}, {SpoolMemory: 1024, StemMemory: 1}} {
					for _, local := range []bool{false, true} {
						name := fmt.Sprintf("n%d/contiguous=%v/cuts%d/spool%d/local=%v", n, contiguous, ci, opts.SpoolMemory, local)
						t.Run(name, func(t *testing.T) {
							parts := writeParts(t, entries, cuts, opts, local)
							out := filepath.Join(t.TempDir(), "x.taridx")
							mo := opts
							mo.Contiguous = contiguous
							w, err := MergeParts(ctx, out, parts, MergeOptions{WriterOptions: mo, Workers: 2})
							if err != nil {
								t.Fatal(err)
							}
							if err := w.Commit(); err != nil {
								t.Fatal(err)
							}
							got, err := os.ReadFile(out)
							if err != nil {
								t.Fatal(err)
							}
							if !bytes.Equal(got, want) {
								x, _ := Parse("x", got)
								y, _ := Parse("y", want)
								t.Fatalf("merged index differs: %d bytes, want %d\n got %+v\nwant %+v", len(got), len(want), x.Header, y.Header)
							}
							x, _ := Parse("x", want)
							if n > 0 && (w.NStems() != x.Header.NStems || len(w.CrashStems()) != int(x.Header.NCrash) || w.Rows() != x.Header.NRows) {
								t.Errorf("writer says %d stems, %d crashes, %d rows", w.NStems(), len(w.CrashStems()), w.Rows())
							}
						})
					}
				}
			}
		}
	}
}

// TestMergePartsRefusesBadParts: a part whose files do not agree with its
// description, or whose rows address shards past the index's, is refused
// with ErrPart, naming the file.
func TestMergePartsRefusesBadParts(t *testing.T) {
	ctx := context.Background()
	entries := stemEntries(3000, 3)
	edit := func(dir string, fn func(b []byte, p *openPart) []byte) {
		path := filepath.Join(dir, PartFile)
		p := &openPart{in: PartInput{Dir: dir}}
		if err := p.open(MaxShards); err != nil {
			t.Fatal(err)
		}
		p.close()
		b, _ := os.ReadFile(path)
		os.WriteFile(path, fn(b, p), 0o644)
	}
	for _, c := range []struct {
		name  string
		harm  func(dir string)
		opts  MergeOptions
		where string
	}{
		{"cut short", func(dir string) {
			edit(dir, func(b []byte, _ *openPart) []byte { return b[:len(b)-40] })
		}, MergeOptions{}, "not a part of this version"},
		{"rows cut", func(dir string) {
			edit(dir, func(b []byte, p *openPart) []byte { return slices.Concat(b[:64], b[96:]) })
		}, MergeOptions{}, "stem records and"},
		{"description", func(dir string) {
			edit(dir, func(b []byte, _ *openPart) []byte {
				return bytes.Replace(b, []byte(`"format":1`), []byte(`"format":9`), 1)
			})
		}, MergeOptions{}, "part format 9"},
		{"stems out of order", func(dir string) {
			edit(dir, func(b []byte, p *openPart) []byte {
				copy(b[p.stemsAt:], bytes.Repeat([]byte{0xff}, 16))
				return b
			})
		}, MergeOptions{}, "out of order"},
		{"fid past the shards", func(string) {}, MergeOptions{Shards: 2}, "of an index of 2 shards"},
	} {
		t.Run(c.name, func(t *testing.T) {
			parts := writeParts(t, entries, []int{1000}, WriterOptions{}, false)
			c.harm(parts[1].Dir)
			out := filepath.Join(t.TempDir(), "x.taridx")
			_, err := MergeParts(ctx, out, parts, c.opts)
			if !errors.Is(err, ErrPart) || !strings.Contains(err.Error(), c.where) || !strings.Contains(err.Error(), filepath.Join(parts[1].Dir, PartFile)) {
				t.Fatalf("err = %v, want ErrPart naming the file: %s", err, c.where)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("an index was left: %v", err)
			}
			if names := listDir(t, filepath.Dir(out)); len(names) != 0 {
				t.Errorf("left behind: %q", names)
			}
		})
	}
}

// FuzzPart: a part's file of any bytes merges or is refused with ErrPart;
// it never panics, nor sizes memory by what it claims.
func FuzzPart(f *testing.F) {
	dir := f.TempDir()
	w, err := CreatePart(dir, WriterOptions{})
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range stemEntries(200, 5) {
		w.Add(e)
	}
	if err := w.ClosePart(); err != nil {
		f.Fatal(err)
	}
	seed, err := os.ReadFile(filepath.Join(dir, PartFile))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(`{"format":1,"rows":1e30}` + "\x18\x00\x00\x00\x00\x00\x00\x00" + partMagic))
	f.Add([]byte(`{"format":1,"rows":3}` + "\x15\x00\x00\x00\x00\x00\x00\x00" + partMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		part := t.TempDir()
		os.WriteFile(filepath.Join(part, PartFile), b, 0o644)
		w, err := MergeParts(context.Background(), filepath.Join(t.TempDir(), "x.taridx"), []PartInput{{Dir: part}}, MergeOptions{})
		if err != nil {
			if !errors.Is(err, ErrPart) && !errors.Is(err, ErrUnrepresentable) {
				t.Fatalf("an error without ErrPart: %v", err)
			}
			return
		}
		w.Abort()
	})
}
