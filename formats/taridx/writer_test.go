package taridx

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"
)

// writeIndex writes entries to dir/name with opts and returns the file.
func writeIndex(t *testing.T, dir, name string, opts WriterOptions, entries []Entry) []byte {
	t.Helper()
	path := filepath.Join(dir, name)
	w, err := Create(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range entries {
		if err := w.Add(e); err != nil {
			t.Fatalf("Add #%d: %v", i, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// listDir returns the names in dir.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// conformanceEntries rebuilds the entries glzn indexed from a fold's
// expected.json: position and size from its rows, stem and extension from
// foldSamples, hash from the stem.
func conformanceEntries(t *testing.T, caseName string, f expFold) []Entry {
	t.Helper()
	samples := foldSamples(t, caseName, f)
	entries := make([]Entry, len(f.Taridx.Rows))
	for i, r := range f.Taridx.Rows {
		s := samples[i]
		entries[i] = Entry{Fid: r.Fid, Offset: r.Offset, Size: r.Size, Stem: s.stem, Ext: s.ext, KeyHash: KeyHash(s.stem)}
	}
	return entries
}

// TestWriterConformance rebuilds every index glzn wrote from its entries:
// the output must be glzn's bytes, with rows in memory and spilled to a
// temporary file alike.
func TestWriterConformance(t *testing.T) {
	root, cases := conformanceRoot(t)
	n := 0
	for _, name := range cases {
		c := loadCase(t, root, name)
		for fold, f := range c.Folds {
			if f.Taridx == nil {
				continue
			}
			t.Run(name+"/"+fold, func(t *testing.T) {
				want, err := os.ReadFile(filepath.Join(root, name, f.TaridxFile))
				if err != nil {
					t.Fatal(err)
				}
				entries := conformanceEntries(t, name, f)
				for _, opts := range []WriterOptions{{}, {SpoolMemory: 64}, {SpoolMemory: 1}} {
					dir := t.TempDir()
					got := writeIndex(t, dir, f.TaridxFile, opts, entries)
					if !bytes.Equal(got, want) {
						t.Errorf("SpoolMemory %d: output differs from glzn's\n got %x\nwant %x", opts.SpoolMemory, got, want)
					}
					if names := listDir(t, dir); !slices.Equal(names, []string{f.TaridxFile}) {
						t.Errorf("directory holds %q", names)
					}
				}
				n++
			})
		}
	}
	if n < 25 {
		t.Errorf("rebuilt only %d indexes", n)
	}
}

// TestWriterEnforceContiguous compares Contiguous output with glzn's
// enforce_contiguous files. glzn sets flag bit 0 on them, as we do.
func TestWriterEnforceContiguous(t *testing.T) {
	root, _ := conformanceRoot(t)
	for _, name := range []string{"duplicates", "noncontiguous"} {
		t.Run(name, func(t *testing.T) {
			f := loadCase(t, root, name).Folds["train"]
			want, err := os.ReadFile(filepath.Join(root, name, f.Enforced.File))
			if err != nil {
				t.Fatal(err)
			}
			if want[56] != FlagContiguous {
				t.Fatalf("glzn's %s has flags %#x", f.Enforced.File, want[56])
			}
			entries := conformanceEntries(t, name, f)
			for _, opts := range []WriterOptions{{Contiguous: true}, {Contiguous: true, SpoolMemory: 32}} {
				got := writeIndex(t, t.TempDir(), "train.taridx", opts, entries)
				if !bytes.Equal(got, want) {
					t.Errorf("%+v: output differs from glzn's enforce_contiguous\n got %x\nwant %x", opts, got, want)
				}
			}
			// Without the option the rows stay in tar order, unflagged.
			plain := writeIndex(t, t.TempDir(), "train.taridx", WriterOptions{}, entries)
			if plain[56] != 0 {
				t.Errorf("flags %#x without Contiguous", plain[56])
			}
		})
	}
}

// TestWriterContiguousSort checks the order of the sort: key hash as an
// unsigned number, then crash id, stable within a sample.
func TestWriterContiguousSort(t *testing.T) {
	const hi = 0x8000000000000001 // negative as an int64
	entries := []Entry{
		{Offset: 0, Stem: "s0", Ext: "a", KeyHash: hi},
		{Offset: 1, Stem: "s1", Ext: "a", KeyHash: 5},
		{Offset: 2, Stem: "s2", Ext: "a", KeyHash: hi}, // crash 1
		{Offset: 3, Stem: "s0", Ext: "b", KeyHash: hi},
		{Offset: 4, Stem: "s3", Ext: "a", KeyHash: 5}, // crash 2
		{Offset: 5, Stem: "s1", Ext: "b", KeyHash: 5},
		{Offset: 6, Stem: "s2", Ext: "b", KeyHash: hi},
		{Offset: 7, Stem: "s4", Ext: "a", KeyHash: 0},
		{Offset: 8, Stem: "s1", Ext: "c", KeyHash: 5},
	}
	data := writeIndex(t, t.TempDir(), "x.taridx", WriterOptions{Contiguous: true}, entries)
	x, err := Parse("x", data)
	if err != nil {
		t.Fatal(err)
	}
	var order []uint64
	var keys []Key
	for _, r := range indexRows(x) {
		order = append(order, r.Offset)
		keys = append(keys, r.Key())
	}
	if want := []uint64{7, 1, 5, 8, 4, 0, 3, 2, 6}; !slices.Equal(order, want) {
		t.Errorf("row order by offset %v, want %v (keys %+v)", order, want, keys)
	}
	if !x.Header.Contiguous() || x.Header.NStems != 5 {
		t.Errorf("flags %#x, n_stems %d", x.Header.Flags, x.Header.NStems)
	}
	if !slices.Equal(x.CrashStems, []string{"s2", "s3"}) {
		t.Errorf("crash stems %q", x.CrashStems)
	}
}

// TestWriterCrashIDs feeds the writer the members of glzn's weakened-hash
// case: the hashes are glzn's weakened ones, so the crash ids, crash block,
// n_stems and flag must come out as glzn wrote them. expected.json there
// has no rows_debug: the stems come from the member names of the shards.
func TestWriterCrashIDs(t *testing.T) {
	dir := weakhashDir(t)
	var want expTaridx
	readJSON(t, filepath.Join(dir, "expected.json"), &want)
	ref, err := os.ReadFile(filepath.Join(dir, "train.taridx"))
	if err != nil {
		t.Fatal(err)
	}
	folds, err := Discover(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(folds) != 1 || folds[0].Name != "train" {
		t.Fatalf("folds %+v", folds)
	}
	var names []string
	testutil.EachTarMember(t, folds[0].Shards, func(h *tar.Header, _ []byte) { names = append(names, h.Name) })
	if len(names) != len(want.Rows) {
		t.Fatalf("%d members for %d rows", len(names), len(want.Rows))
	}
	entries := make([]Entry, len(names))
	for i, r := range want.Rows {
		stem, ext := SplitName(DecodeName([]byte(names[i])), StemBasename)
		if b, ok := want.StemBuckets[stem]; !ok || b != r.KeyHash {
			t.Fatalf("row %d: stem %q is in bucket %d (%v), row hash %d", i, stem, b, ok, r.KeyHash)
		}
		entries[i] = Entry{Fid: r.Fid, Offset: r.Offset, Size: r.Size, Stem: stem, Ext: ext, KeyHash: r.KeyHash}
	}
	for _, opts := range []WriterOptions{{}, {SpoolMemory: 64}} {
		got := writeIndex(t, t.TempDir(), "train.taridx", opts, entries)
		if !bytes.Equal(got, ref) {
			t.Errorf("SpoolMemory %d: output differs from glzn's\n got %x\nwant %x", opts.SpoolMemory, got, ref)
		}
	}

	// The same through the accessors, before Close.
	w, err := Create(filepath.Join(t.TempDir(), "y.taridx"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, e := range entries {
		if err := w.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(w.CrashStems(), want.CrashStems) || !slices.Equal(w.Exts(), want.Exts) {
		t.Errorf("CrashStems() %q, Exts() %q", w.CrashStems(), w.Exts())
	}
	if w.NStems() != want.Header.NStems || w.Rows() != want.Header.NRows || w.Contiguous() {
		t.Errorf("NStems %d, Rows %d, Contiguous %v", w.NStems(), w.Rows(), w.Contiguous())
	}
}

// TestWriterRoundTrip checks the writer's rules on hand-made entries and
// that Parse reads back what was written.
func TestWriterRoundTrip(t *testing.T) {
	type row = Row
	tests := []struct {
		name    string
		entries []Entry
		exts    []string
		crash   []string
		nStems  uint64
		contig  bool
		rows    []row
	}{
		{
			name: "empty", contig: true,
		},
		{
			name:    "one row",
			entries: []Entry{{Fid: 3, Offset: 1536, Size: 7, Stem: "a", Ext: "jpg", KeyHash: 1}},
			exts:    []string{"jpg"}, nStems: 1, contig: true,
			rows: []row{{Fid: 3, Offset: 1536, Size: 7, KeyHash: 1}},
		},
		{
			name: "one empty extension",
			entries: []Entry{
				{Stem: "a", KeyHash: 1},
				{Offset: 512, Stem: "b", KeyHash: 2},
			},
			exts: []string{""}, nStems: 2, contig: true,
			rows: []row{{KeyHash: 1}, {Offset: 512, KeyHash: 2}},
		},
		{
			name: "extension ids by first appearance",
			entries: []Entry{
				{Stem: "a", Ext: "png", KeyHash: 1},
				{Stem: "a", Ext: "", KeyHash: 1},
				{Stem: "b", Ext: "cls", KeyHash: 2},
				{Stem: "b", Ext: "png", KeyHash: 2},
				{Stem: "c", Ext: "a b", KeyHash: 3},
			},
			exts: []string{"png", "", "cls", "a b"}, nStems: 3, contig: true,
			rows: []row{{KeyHash: 1}, {ExtID: 1, KeyHash: 1}, {ExtID: 2, KeyHash: 2}, {KeyHash: 2}, {ExtID: 3, KeyHash: 3}},
		},
		{
			name: "not contiguous",
			entries: []Entry{
				{Stem: "a", Ext: "x", KeyHash: 1},
				{Stem: "b", Ext: "x", KeyHash: 2},
				{Stem: "a", Ext: "y", KeyHash: 1},
			},
			exts: []string{"x", "y"}, nStems: 2,
			rows: []row{{KeyHash: 1}, {KeyHash: 2}, {ExtID: 1, KeyHash: 1}},
		},
		{
			name: "duplicate members stay contiguous",
			entries: []Entry{
				{Stem: "a", Ext: "x", KeyHash: 1},
				{Stem: "a", Ext: "x", KeyHash: 1},
				{Stem: "b", Ext: "x", KeyHash: 2},
			},
			exts: []string{"x"}, nStems: 2, contig: true,
			rows: []row{{KeyHash: 1}, {KeyHash: 1}, {KeyHash: 2}},
		},
		{
			name: "crashes",
			entries: []Entry{
				{Stem: "a", Ext: "x", KeyHash: 7},
				{Stem: "b", Ext: "x", KeyHash: 7}, // crash 1
				{Stem: "c", Ext: "x", KeyHash: 7}, // crash 2
				{Stem: "b", Ext: "y", KeyHash: 7}, // crash 1 again
				{Stem: "d", Ext: "x", KeyHash: 8},
				{Stem: "a", Ext: "y", KeyHash: 7}, // canonical again
				{Stem: "", Ext: "x", KeyHash: 8},  // crash 3, empty stem
			},
			exts: []string{"x", "y"}, crash: []string{"b", "c", ""}, nStems: 5,
			rows: []row{
				{KeyHash: 7}, {CrashID: 1, KeyHash: 7}, {CrashID: 2, KeyHash: 7}, {ExtID: 1, CrashID: 1, KeyHash: 7},
				{KeyHash: 8}, {ExtID: 1, KeyHash: 7}, {CrashID: 3, KeyHash: 8},
			},
		},
		{
			name: "stem with newline is canonical",
			entries: []Entry{
				{Stem: "a\nb", Ext: "x", KeyHash: 1},
				{Stem: "a\nb", Ext: "y", KeyHash: 1},
			},
			exts: []string{"x", "y"}, nStems: 1, contig: true,
			rows: []row{{KeyHash: 1}, {ExtID: 1, KeyHash: 1}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var outs [][]byte
			for _, opts := range []WriterOptions{{}, {SpoolMemory: 32}} {
				data := writeIndex(t, t.TempDir(), "x.taridx", opts, tt.entries)
				outs = append(outs, data)
				x, err := Parse("x", data)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				want := Header{
					Major: 1, Minor: 0, RecSize: 32, HdrSize: 64,
					NStems: tt.nStems, NRows: uint64(len(tt.rows)),
					NExt: uint32(len(tt.exts)), NCrash: uint32(len(tt.crash)),
				}
				want.OffCrash = 64 + uint64(len(strings.Join(tt.exts, "\n")))
				want.OffArr = want.OffCrash + uint64(len(strings.Join(tt.crash, "\n")))
				if tt.contig {
					want.Flags = FlagContiguous
				}
				if x.Header != want {
					t.Errorf("header\n got %+v\nwant %+v", x.Header, want)
				}
				if !slices.Equal(x.Exts, tt.exts) || !slices.Equal(x.CrashStems, tt.crash) {
					t.Errorf("exts %q crash %q, want %q %q", x.Exts, x.CrashStems, tt.exts, tt.crash)
				}
				if got := indexRows(x); !slices.Equal(got, tt.rows) {
					t.Errorf("rows\n got %+v\nwant %+v", got, tt.rows)
				}
			}
			if !bytes.Equal(outs[0], outs[1]) {
				t.Error("spilled output differs from in-memory output")
			}
		})
	}
}

// TestWriterSpill writes enough rows to pass the spill buffers several
// times over and compares the spilled file with the in-memory one.
func TestWriterSpill(t *testing.T) {
	const n = 40000 // 1.28 MB of rows, more than the 1 MiB write buffers
	entries := make([]Entry, n)
	for i := range entries {
		stem := string(rune('a'+i%26)) + strings.Repeat("x", i%7)
		entries[i] = Entry{
			Fid: uint16(i / 1000), Offset: uint64(i) * 1024, Size: uint64(i),
			Stem: stem, Ext: []string{"jpg", "cls", "json"}[i%3], KeyHash: KeyHash(stem),
		}
	}
	mem := writeIndex(t, t.TempDir(), "m.taridx", WriterOptions{}, entries)
	for _, spool := range []int{1, 64, 1000, 1 << 20} {
		dir := t.TempDir()
		got := writeIndex(t, dir, "s.taridx", WriterOptions{SpoolMemory: spool}, entries)
		if !bytes.Equal(got, mem) {
			t.Errorf("SpoolMemory %d: output differs from in-memory output", spool)
		}
		if names := listDir(t, dir); !slices.Equal(names, []string{"s.taridx"}) {
			t.Errorf("SpoolMemory %d: directory holds %q", spool, names)
		}
	}
	x, err := Parse("m", mem)
	if err != nil {
		t.Fatal(err)
	}
	if x.Len() != n || x.Row(n-1) != (Row{Fid: (n - 1) / 1000, Offset: (n - 1) * 1024, Size: n - 1, ExtID: (n - 1) % 3, KeyHash: entries[n-1].KeyHash}) {
		t.Errorf("%d rows, last %+v", x.Len(), x.Row(n-1))
	}
	if x.Header.NStems != 26*7 || x.Header.Contiguous() {
		t.Errorf("n_stems %d, flags %#x", x.Header.NStems, x.Header.Flags)
	}
}

func TestWriterUnrepresentable(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		// atClose: the crash table is known only once every stem is in.
		atClose bool
	}{
		{"newline in extension", []Entry{{Stem: "a", Ext: "j\npg", KeyHash: 1}}, false},
		{"newline in extension after others", []Entry{
			{Stem: "a", Ext: "jpg", KeyHash: 1},
			{Stem: "a", Ext: "\n", KeyHash: 1},
		}, false},
		{"newline in crash stem", []Entry{
			{Stem: "a", Ext: "jpg", KeyHash: 1},
			{Stem: "b\n", Ext: "jpg", KeyHash: 1},
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.taridx")
			old := []byte("an earlier file")
			if err := os.WriteFile(path, old, 0o644); err != nil {
				t.Fatal(err)
			}
			w, err := Create(path, WriterOptions{})
			if err != nil {
				t.Fatal(err)
			}
			last := len(tt.entries) - 1
			for i, e := range tt.entries[:last] {
				if err := w.Add(e); err != nil {
					t.Fatalf("Add #%d: %v", i, err)
				}
			}
			err = w.Add(tt.entries[last])
			if tt.atClose {
				if err != nil {
					t.Fatalf("Add: %v", err)
				}
				err = w.Tables()
			}
			if !errors.Is(err, ErrUnrepresentable) {
				t.Fatalf("Add: %v, want ErrUnrepresentable", err)
			}
			// The writer stays failed.
			if err2 := w.Add(Entry{Stem: "z", Ext: "ok", KeyHash: 9}); !errors.Is(err2, ErrUnrepresentable) {
				t.Errorf("Add after failure: %v", err2)
			}
			if err := w.Close(); !errors.Is(err, ErrUnrepresentable) {
				t.Errorf("Close: %v, want ErrUnrepresentable", err)
			}
			checkUntouched(t, dir, path, old)
		})
	}
}

// checkUntouched checks that dir holds only path, with its old content.
func checkUntouched(t *testing.T, dir, path string, old []byte) {
	t.Helper()
	if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, old) {
		t.Errorf("%s: %q, %v; want the earlier file", path, got, err)
	}
	if names := listDir(t, dir); !slices.Equal(names, []string{filepath.Base(path)}) {
		t.Errorf("directory holds %q", names)
	}
}

func TestWriterAbort(t *testing.T) {
	entries := make([]Entry, 10)
	for i := range entries {
		entries[i] = Entry{Offset: uint64(i) * 512, Stem: "s", Ext: string(rune('a' + i)), KeyHash: 1}
	}
	for _, opts := range []WriterOptions{{}, {SpoolMemory: 64}, {Contiguous: true}} {
		// Over an earlier file.
		dir := t.TempDir()
		path := filepath.Join(dir, "x.taridx")
		old := []byte("an earlier file")
		if err := os.WriteFile(path, old, 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := Create(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := w.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		w.Abort()
		w.Abort() // a second Abort is harmless
		checkUntouched(t, dir, path, old)
		if err := w.Add(entries[0]); err == nil {
			t.Errorf("%+v: Add after Abort succeeded", opts)
		}
		if err := w.Close(); err == nil {
			t.Errorf("%+v: Close after Abort succeeded", opts)
		}
		checkUntouched(t, dir, path, old)

		// With no earlier file.
		dir = t.TempDir()
		w, err = Create(filepath.Join(dir, "y.taridx"), opts)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if err := w.Add(e); err != nil {
				t.Fatal(err)
			}
		}
		w.Abort()
		if names := listDir(t, dir); len(names) != 0 {
			t.Errorf("%+v: directory holds %q after Abort", opts, names)
		}
	}
}

// TestWriterCloseFails makes the final rename fail: the target is a
// directory. Nothing may be left behind.
func TestWriterCloseFails(t *testing.T) {
	for _, opts := range []WriterOptions{{}, {SpoolMemory: 64}} {
		dir := t.TempDir()
		target := filepath.Join(dir, "x.taridx")
		if err := os.Mkdir(target, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(target, "keep"), []byte("k"), 0o644); err != nil {
			t.Fatal(err)
		}
		w, err := Create(target, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := w.Add(Entry{Offset: uint64(i) * 512, Stem: "s", Ext: "e", KeyHash: 1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err == nil {
			t.Fatalf("%+v: Close over a directory succeeded", opts)
		}
		if names := listDir(t, dir); !slices.Equal(names, []string{"x.taridx"}) {
			t.Errorf("%+v: directory holds %q", opts, names)
		}
		if names := listDir(t, target); !slices.Equal(names, []string{"keep"}) {
			t.Errorf("%+v: target directory holds %q", opts, names)
		}
	}
}

func TestWriterCloseTwice(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.taridx")
	w, err := Create(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(Entry{Stem: "a", Ext: "jpg", KeyHash: 1}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(path)
	if err := w.Close(); err == nil {
		t.Error("second Close succeeded")
	}
	if err := w.Add(Entry{Stem: "b", Ext: "jpg", KeyHash: 2}); err == nil {
		t.Error("Add after Close succeeded")
	}
	w.Abort()
	checkUntouched(t, dir, path, want)
	if _, err := ReadFile(path); err != nil {
		t.Error(err)
	}
}

func TestCreateFails(t *testing.T) {
	_, err := Create(filepath.Join(t.TempDir(), "missing", "x.taridx"), WriterOptions{})
	if err == nil {
		t.Fatal("Create in a missing directory succeeded")
	}
}

// TestWriterLimits: extension ids are 16-bit, so 65536 extensions fit and
// one more does not; a stem longer than the writer keeps is refused.
func TestWriterLimits(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.taridx")
	w, err := Create(path, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1 << 16 {
		e := Entry{Offset: uint64(i) * 512, Stem: "s", Ext: strconv.Itoa(i), KeyHash: 1}
		if err := w.Add(e); err != nil {
			t.Fatalf("extension #%d: %v", i, err)
		}
	}
	if err := w.Add(Entry{Stem: "s", Ext: "0", KeyHash: 1}); err != nil {
		t.Fatalf("a known extension: %v", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	x, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Exts) != 1<<16 || x.Row(1<<16-1).ExtID != 0xffff || x.Row(1<<16).ExtID != 0 {
		t.Errorf("%d exts", len(x.Exts))
	}

	w, err = Create(filepath.Join(dir, "y.taridx"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 1 << 16 {
		if err := w.Add(Entry{Stem: "s", Ext: strconv.Itoa(i), KeyHash: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Add(Entry{Stem: "s", Ext: "one too many", KeyHash: 1}); !errors.Is(err, ErrUnrepresentable) {
		t.Errorf("extension #65536: %v, want ErrUnrepresentable", err)
	}
	if err := w.Close(); err == nil {
		t.Error("Close succeeded")
	}

	w, err = Create(filepath.Join(dir, "z.taridx"), WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(Entry{Stem: strings.Repeat("s", 1<<20), Ext: "jpg", KeyHash: 1}); err == nil {
		t.Error("1 MiB stem accepted")
	}
	w.Abort()
	if names := listDir(t, dir); !slices.Equal(names, []string{"x.taridx"}) {
		t.Errorf("directory holds %q", names)
	}
}

// TestContiguousExternalSort: with a tiny SpoolMemory, --contiguous sorts
// runs and merges them; the result equals the in-memory stable sort.
func TestContiguousExternalSort(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, spool int) []byte {
		w, err := Create(filepath.Join(dir, name), WriterOptions{Contiguous: true, SpoolMemory: spool})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 5000; i++ {
			stem := fmt.Sprintf("k%03d", (i*7919)%251) // keys recur, far apart
			if err := w.Add(Entry{Fid: uint16(i / 1000), Offset: uint64(i) * 1024, Size: uint64(i), Stem: stem, Ext: []string{"jpg", "cls"}[i%2], KeyHash: KeyHash(stem)}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return b
	}
	inMemory := write("mem.taridx", 16<<20)
	external := write("ext.taridx", 10*RecordSize+5) // runs of 11 rows
	if !bytes.Equal(inMemory, external) {
		t.Fatal("external sort differs from the in-memory sort")
	}
	x, err := Parse("ext", external)
	if err != nil || !x.Header.Contiguous() || x.Len() != 5000 {
		t.Fatalf("%v %+v", err, x.Header)
	}
	for i := 1; i < x.Len(); i++ {
		a, b := x.Row(i-1), x.Row(i)
		if a.KeyHash > b.KeyHash || (a.KeyHash == b.KeyHash && a.CrashID == b.CrashID && a.Offset > b.Offset) {
			t.Fatalf("rows %d and %d out of order (or not stable)", i-1, i)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("left behind: %v", entries)
	}
}
