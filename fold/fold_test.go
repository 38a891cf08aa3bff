package fold

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/testing/testutil"
)

// caseDir copies a conformance case's shards to a temporary directory and
// indexes it; shared/ is never written.
func caseDir(t *testing.T, name string, opts IndexOptions) (string, *Fold) {
	t.Helper()
	src := filepath.Join(testutil.Conformance(t, "taridx"), name)
	dir := t.TempDir()
	shards, _ := filepath.Glob(filepath.Join(src, "train_*.tar"))
	var copies []string
	for _, s := range shards {
		b, err := os.ReadFile(s)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, filepath.Base(s))
		os.WriteFile(dst, b, 0o644)
		copies = append(copies, dst)
	}
	idx := filepath.Join(dir, "train.taridx")
	if _, err := BuildIndex(context.Background(), copies, idx, opts); err != nil {
		t.Fatal(err)
	}
	f, err := Open(idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return dir, f
}

func TestLookupAndCopy(t *testing.T) {
	_, f := caseDir(t, "duplicates", IndexOptions{})
	tests := []struct {
		name string
		rows []int
	}{
		{"a.jpg", []int{0, 1}},
		{"c.cls", []int{7}},
		{"b.jpg", []int{3, 5}},
	}
	for _, tc := range tests {
		ms, err := f.Lookup(tc.name)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		var rows []int
		for _, m := range ms {
			rows = append(rows, m.Index)
			var buf bytes.Buffer
			n, err := f.Copy(context.Background(), &buf, m)
			if err != nil || uint64(n) != m.Row.Size || buf.Len() != int(m.Row.Size) {
				t.Errorf("%s row %d: copied %d bytes, want %d (%v)", tc.name, m.Index, n, m.Row.Size, err)
			}
		}
		if len(rows) != len(tc.rows) || rows[0] != tc.rows[0] || rows[len(rows)-1] != tc.rows[len(tc.rows)-1] {
			t.Errorf("%s: rows %v, want %v", tc.name, rows, tc.rows)
		}
	}
	for _, missing := range []string{"a.png", "zz.jpg", "noext"} {
		if _, err := f.Lookup(missing); !errors.Is(err, ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", missing, err)
		}
	}
}

func TestCopyDetectsStaleHeader(t *testing.T) {
	dir, f := caseDir(t, "ustar_basic", IndexOptions{})
	ms, err := f.Lookup("s0001.cls")
	if err != nil {
		t.Fatal(err)
	}
	shard := filepath.Join(dir, "train_0000.tar")
	b, _ := os.ReadFile(shard)
	b[ms[0].Row.Offset+3] ^= 0x20 // change the name: the checksum no longer matches
	os.WriteFile(shard, b, 0o644)
	_, err = f.Copy(context.Background(), &bytes.Buffer{}, ms[0])
	if !errors.Is(err, ErrStale) || !strings.Contains(err.Error(), "offset 3072") {
		t.Errorf("got %v, want ErrStale at offset 3072", err)
	}
}

// TestVerifyCompatIndex: an index in glzn's mode has rows for directories
// and pax headers, which verify accepts by their header blocks.
func TestVerifyCompatIndex(t *testing.T) {
	for _, c := range []string{"pax_gnutar", "gnu_longname_gnutar", "nested_dirs_gnutar"} {
		_, f := caseDir(t, c, IndexOptions{CompatGLZN: true})
		rep, err := f.Verify(context.Background(), VerifyOptions{Data: true})
		if err != nil || !rep.OK() {
			t.Errorf("%s: %v %+v", c, err, rep)
		}
		_, f = caseDir(t, c, IndexOptions{})
		rep, err = f.Verify(context.Background(), VerifyOptions{Data: true})
		if err != nil || !rep.OK() || rep.Rows == 0 {
			t.Errorf("%s (default): %v %+v", c, err, rep)
		}
	}
}

func TestListFullNames(t *testing.T) {
	_, f := caseDir(t, "pax_py", IndexOptions{})
	var names []string
	err := f.List(context.Background(), tarfile.Options{}, func(e Entry) error {
		names = append(names, e.Name)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"café.jpg", "café.cls", "日本語.png", "plain.jpg"}
	for i, w := range want {
		if names[i] != w {
			t.Errorf("row %d: %q, want %q", i, names[i], w)
		}
	}
	if len(names) != 6 || !strings.HasSuffix(names[4], "/deep.jpg") || len(names[5]) < 100 {
		t.Errorf("names %q", names)
	}
}

func TestOpenAll(t *testing.T) {
	dir, _ := caseDir(t, "ustar_basic", IndexOptions{})
	folds, err := OpenAll(dir, "", nil)
	if err != nil || len(folds) != 1 || folds[0].Name != "train" || len(folds[0].Shards) != 2 {
		t.Fatalf("%v %+v", err, folds)
	}
	if _, err := OpenAll(dir, "val", nil); err == nil {
		t.Error("fold val has no shards here: want an error")
	}
}

// TestCopyStaleMember: a shard rewritten so that another member stands at a
// row's offset (a valid header, other size or other name) is refused.
func TestCopyStaleMember(t *testing.T) {
	for _, tc := range []struct {
		name, member string
		size         int
	}{
		{"other size", "a.jpg", 3},
		{"other name", "z.jpg", 11},
	} {
		dir, f := caseDir(t, "duplicates", IndexOptions{})
		ms, err := f.Lookup("a.jpg")
		if err != nil || len(ms) != 2 || ms[1].Row.Offset != 1024 {
			t.Fatalf("lookup: %v %+v", err, ms)
		}
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for _, m := range []struct {
			name string
			size int
		}{{"a.jpg", 10}, {tc.member, tc.size}} {
			tw.WriteHeader(&tar.Header{Name: m.name, Size: int64(m.size), Mode: 0o644, Typeflag: tar.TypeReg})
			tw.Write(bytes.Repeat([]byte{'q'}, m.size))
		}
		tw.Close()
		os.WriteFile(filepath.Join(dir, "train_0000.tar"), buf.Bytes(), 0o644)
		var out bytes.Buffer
		if _, err := f.Copy(context.Background(), &out, ms[1]); !errors.Is(err, ErrStale) || out.Len() != 0 {
			t.Errorf("%s: wrote %d bytes, error %v; want ErrStale and nothing written", tc.name, out.Len(), err)
		}
		if _, err := f.Copy(context.Background(), &out, ms[0]); err != nil || out.Len() != 10 {
			t.Errorf("%s: the unchanged member: %v", tc.name, err)
		}
	}
}

// TestVerifyConcatenated: an index built with --ignore-zeros verifies
// without the flag: rows past the first end-of-archive marker make verify
// and ls read on, as the index was built.
func TestVerifyConcatenated(t *testing.T) {
	_, f := caseDir(t, "concatenated", IndexOptions{Scan: tarfile.Options{IgnoreZeros: true}})
	if f.Index.Len() < 2 {
		t.Fatalf("%d rows: the case should hold two archives", f.Index.Len())
	}
	rep, err := f.Verify(context.Background(), VerifyOptions{})
	if err != nil || !rep.OK() {
		t.Errorf("verify: %v %+v", err, rep)
	}
	n := 0
	if err := f.List(context.Background(), tarfile.Options{}, func(Entry) error { n++; return nil }); err != nil || n != f.Index.Len() {
		t.Errorf("list: %d rows, %v", n, err)
	}
}

// TestCanceled: Verify, List and Copy stop with the caller's context
// (before, their header walks and opens ran under context.Background).
func TestCanceled(t *testing.T) {
	_, f := caseDir(t, "ustar_basic", IndexOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Verify(ctx, VerifyOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Verify: %v, want context.Canceled", err)
	}
	if err := f.List(ctx, tarfile.Options{}, func(Entry) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("List: %v, want context.Canceled", err)
	}
	if _, err := f.Verify(context.Background(), VerifyOptions{}); err != nil {
		t.Errorf("Verify uncanceled: %v", err)
	}
}
