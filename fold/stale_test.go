package fold

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
)

// member is one tar entry of a test shard.
type member struct {
	name string
	typ  byte
	body []byte
}

func writeTar(t *testing.T, path string, ms []member) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		typ := m.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		h := &tar.Header{Name: m.name, Typeflag: typ, Mode: 0o644, Size: int64(len(m.body)), Format: tar.FormatUSTAR}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(m.body)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// appendTar appends members to a tar file as `tar rf` does: over its
// end-of-archive blocks, which are written again after them.
func appendTar(t *testing.T, path string, ms []member) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		h := &tar.Header{Name: m.name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(m.body)), Format: tar.FormatUSTAR}
		if m.typ != 0 {
			h.Typeflag, h.Size = m.typ, 0
		}
		tw.WriteHeader(h)
		tw.Write(m.body)
	}
	tw.Close()
	// archive/tar ends an archive with two zero blocks, padded to 10 KiB
	// records by nothing: the end is the last 1024 bytes.
	end := len(b) - 1024
	for end > 0 && bytes.Count(b[end-512:end], []byte{0}) == 512 {
		end -= 512
	}
	if err := os.WriteFile(path, append(b[:end:end], buf.Bytes()...), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sampleShards writes n shards of a fold, two members per sample.
func sampleShards(t *testing.T, dir, fold string, n, perShard int) []string {
	t.Helper()
	var paths []string
	k := 0
	for s := 0; s < n; s++ {
		var ms []member
		for i := 0; i < perShard; i++ {
			key := fmt.Sprintf("k%04d", k)
			k++
			ms = append(ms, member{name: key + ".jpg", body: bytes.Repeat([]byte{'j'}, 100+k)},
				member{name: key + ".cls", body: []byte(fmt.Sprint(k))})
		}
		p := filepath.Join(dir, fmt.Sprintf("%s_%04d.tar", fold, s))
		writeTar(t, p, ms)
		paths = append(paths, p)
	}
	return paths
}

func indexDir(t *testing.T, dir string, shards []string, opts IndexOptions) *Fold {
	t.Helper()
	idx := filepath.Join(dir, "train.taridx")
	if _, err := BuildIndex(context.Background(), shards, idx, opts); err != nil {
		t.Fatal(err)
	}
	f, err := Open(idx, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCopyTruncatedPayload: a shard cut short inside a payload gives
// ErrTruncated and not one byte of output.
func TestCopyTruncatedPayload(t *testing.T) {
	dir := t.TempDir()
	shard := filepath.Join(dir, "train_0000.tar")
	writeTar(t, shard, []member{{name: "a.jpg", body: bytes.Repeat([]byte{'a'}, 600)}, {name: "b.bin", body: bytes.Repeat([]byte{'b'}, 3000)}})
	f := indexDir(t, dir, []string{shard}, IndexOptions{})
	ms, err := f.Lookup("b.bin")
	if err != nil || len(ms) != 1 {
		t.Fatalf("lookup: %v", err)
	}
	// Keep the header and 1000 of the 3000 payload bytes.
	if err := os.Truncate(shard, int64(ms[0].Row.DataOffset())+1000); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	n, err := f.Copy(context.Background(), &out, ms[0])
	if !errors.Is(err, ErrTruncated) || !errors.Is(err, ErrStale) || n != 0 || out.Len() != 0 {
		t.Fatalf("copied %d bytes (%d written), error %v; want ErrTruncated and nothing written", n, out.Len(), err)
	}
	if !strings.Contains(err.Error(), "train_0000.tar: offset 1536") || !strings.Contains(err.Error(), "it holds 3048:") {
		t.Errorf("error %q does not name the shard, offset and size", err)
	}
	// The member before it is whole and still copies.
	ms, _ = f.Lookup("a.jpg")
	out.Reset()
	if n, err := f.Copy(context.Background(), &out, ms[0]); err != nil || n != 600 || out.Len() != 600 {
		t.Errorf("a.jpg: %d bytes, %v", n, err)
	}
}

// problems lists a report's problems as "kind|shard|row|offset|what".
func problems(rep *Report) []string {
	var out []string
	for _, p := range rep.Problems {
		out = append(out, fmt.Sprintf("%s|%s|%d|%d|%s", p.Kind, p.Shard, p.Row, p.Offset, p.What))
	}
	return out
}

// TestVerifyCoversShards: verify reports members appended to an indexed
// shard (as tar rf does), shards of the fold past the index's last, and
// rows whose shard is gone; members the index's rule leaves out (no
// extension, white space in it, directories) are not extras of a default
// index, but are of an index in glzn's mode.
func TestVerifyCoversShards(t *testing.T) {
	jpg := bytes.Repeat([]byte{'x'}, 700)
	tests := []struct {
		name   string
		compat bool
		change func(t *testing.T, dir string, shards []string)
		want   []string
		extra  int64
		shards int
	}{
		{name: "unchanged", change: func(*testing.T, string, []string) {}},
		{name: "tar rf", change: func(t *testing.T, dir string, shards []string) {
			appendTar(t, shards[0], []member{{name: "late.jpg", body: jpg}, {name: "README", body: []byte("no extension")}, {name: "odd.j pg", body: []byte("space")}})
		}, want: []string{`extra member|train_0000.tar|-1|4096|member "late.jpg" (700 bytes) is not in the index`}, extra: 1},
		{name: "extra shard", change: func(t *testing.T, dir string, shards []string) {
			writeTar(t, filepath.Join(dir, "train_0002.tar"), []member{{name: "old1.jpg", body: jpg}, {name: "old1.cls", body: []byte("1")}})
		}, want: []string{`extra shard|train_0002.tar|-1|0|a shard of the fold that the index does not cover (its last shard is fid 1): 2 members, the first "old1.jpg"`}, extra: 2, shards: 1},
		{name: "shard of directories only", change: func(t *testing.T, dir string, shards []string) {
			writeTar(t, filepath.Join(dir, "train_0002.tar"), []member{{name: "d/", typ: tar.TypeDir}})
		}},
		{name: "missing shard", change: func(t *testing.T, dir string, shards []string) {
			os.Remove(shards[1])
		}, want: []string{
			"row|(missing)|4|0|fid 1, but the fold has 1 shards", "row|(missing)|5|1024|fid 1, but the fold has 1 shards",
			"row|(missing)|6|2048|fid 1, but the fold has 1 shards", "row|(missing)|7|3072|fid 1, but the fold has 1 shards"}},
		{name: "compat: tar rf of a directory", compat: true, change: func(t *testing.T, dir string, shards []string) {
			appendTar(t, shards[1], []member{{name: "late/", typ: tar.TypeDir}})
		}, want: []string{`extra member|train_0001.tar|-1|4096|member "late/" (0 bytes) is not in the index`}, extra: 1},
		{name: "default: tar rf of a directory", change: func(t *testing.T, dir string, shards []string) {
			appendTar(t, shards[1], []member{{name: "late/", typ: tar.TypeDir}})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			shards := sampleShards(t, dir, "train", 2, 2)
			if tc.compat {
				// A directory member makes the index one only glzn's mode makes.
				writeTar(t, shards[0], []member{{name: "k0000.jpg", body: jpg}, {name: "k0000.cls", body: []byte("1")}, {name: "d/", typ: tar.TypeDir}, {name: "k0001.jpg", body: jpg}})
			}
			indexDir(t, dir, shards, IndexOptions{CompatGLZN: tc.compat})
			tc.change(t, dir, shards)
			// The index in memory, and its rows left in the file.
			for _, rowsInFile := range []bool{false, true} {
				f, err := open(filepath.Join(dir, "train.taridx"), nil, rowsInFile)
				if err != nil {
					t.Fatal(err)
				}
				rep, err := f.Verify(context.Background(), VerifyOptions{Data: true})
				if err != nil {
					t.Fatal(err)
				}
				got := problems(rep)
				if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
					t.Errorf("rows in file %v: problems:\n%s\nwant:\n%s", rowsInFile, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
				}
				if rep.OK() != (len(tc.want) == 0) || rep.ExtraMembers != tc.extra || rep.ExtraShards != tc.shards || rep.Compat != tc.compat {
					t.Errorf("rows in file %v: report: ok %v, %d extra members, %d extra shards, compat %v", rowsInFile, rep.OK(), rep.ExtraMembers, rep.ExtraShards, rep.Compat)
				}
			}
		})
	}
}

// TestVerifyRowsInFile: Verify reads an index whose rows stay in the
// file a range at a time when they come in shard order, falls back to
// memory when they do not (a contiguous index), and reports alike.
func TestVerifyRowsInFile(t *testing.T) {
	for _, contiguous := range []bool{false, true} {
		dir := t.TempDir()
		shards := sampleShards(t, dir, "train", 3, 5)
		indexDir(t, dir, shards, IndexOptions{Contiguous: contiguous})
		appendTar(t, shards[1], []member{{name: "late.jpg", body: []byte("late")}})
		var reports []string
		for _, rowsInFile := range []bool{false, true} {
			f, err := open(filepath.Join(dir, "train.taridx"), nil, rowsInFile)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := f.Verify(context.Background(), VerifyOptions{Data: true, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			if (f.Index != nil) != (contiguous || !rowsInFile) {
				t.Errorf("contiguous %v, rows in file %v: index loaded %v", contiguous, rowsInFile, f.Index != nil)
			}
			reports = append(reports, fmt.Sprintf("%d rows, %d data bytes, problems %q", rep.Rows, rep.DataBytes, problems(rep)))
		}
		if reports[0] != reports[1] || !strings.Contains(reports[0], "late.jpg") || !strings.HasPrefix(reports[0], "30 rows") {
			t.Errorf("contiguous %v: reports\n%s\n%s", contiguous, reports[0], reports[1])
		}
	}
}

// TestListContiguousIndex: rows of a contiguous index come in key order,
// not shard order; List still gives each row the name at its offset.
func TestListContiguousIndex(t *testing.T) {
	dir := t.TempDir()
	shards := sampleShards(t, dir, "train", 3, 5)
	f := indexDir(t, dir, shards, IndexOptions{Contiguous: true})
	inOrder := true
	for i := 1; i < f.Index.Len(); i++ {
		a, b := f.Index.Row(i-1), f.Index.Row(i)
		if b.Fid < a.Fid || (b.Fid == a.Fid && b.Offset < a.Offset) {
			inOrder = false
		}
	}
	if inOrder {
		t.Fatal("the contiguous index kept shard order: the test needs rows out of it")
	}
	n := 0
	err := f.List(context.Background(), tarfile.Options{}, func(e Entry) error {
		r := f.Index.Row(e.Row)
		stem, ext := taridx.SplitName(e.Name, taridx.StemBasename)
		if e.Row != n || taridx.KeyHash(stem) != r.KeyHash || f.Index.Exts[r.ExtID] != ext || e.Offset != r.Offset || e.Shard != filepath.Base(shards[r.Fid]) {
			t.Errorf("entry %+v for row %+v", e, r)
		}
		n++
		return nil
	})
	if err != nil || n != 30 {
		t.Errorf("%d entries, %v", n, err)
	}
}

// TestNameArena: names come back whole across chunk boundaries, a name
// longer than a chunk included.
func TestNameArena(t *testing.T) {
	var a nameArena
	var refs []uint32
	var want []string
	for i := 0; i < 5000; i++ {
		name := strings.Repeat(fmt.Sprint(i%10), 1+i%700)
		if i == 2500 {
			name = strings.Repeat("L", 3<<nameChunkBits)
		}
		ref, ok := a.add(name)
		if !ok {
			t.Fatal("arena full")
		}
		refs, want = append(refs, ref), append(want, name)
	}
	for i, ref := range refs {
		if got := a.get(ref); got != want[i] {
			t.Fatalf("name %d: %d bytes, want %d", i, len(got), len(want[i]))
		}
	}
	if len(a.chunks) < 3 {
		t.Errorf("%d chunks: the test should cross chunk boundaries", len(a.chunks))
	}
}

// TestWindow: payloads read through a small window, in offset order,
// straddling its end, larger than it, and past the end of the data.
func TestWindow(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10) // 100 bytes
	r := &countingReaderAt{r: bytes.NewReader(data)}
	w := &window{r: r, buf: make([]byte, 16)}
	for _, c := range []struct {
		off, size, want int64
		err             bool
	}{
		{0, 1, 1, false}, {1, 5, 5, false}, {10, 6, 6, false}, // one read
		{14, 4, 4, false},                      // past the window: a read
		{20, 40, 40, false},                    // larger than the window
		{90, 10, 10, false}, {95, 10, 5, true}, // past the end
		{200, 1, 0, true},
	} {
		n, err := w.read(c.off, c.size)
		if n != c.want || (err != nil) != c.err {
			t.Errorf("read(%d, %d) = %d, %v; want %d, error %v", c.off, c.size, n, err, c.want, c.err)
		}
	}
	if r.reads > 8 {
		t.Errorf("%d reads", r.reads)
	}
}

type countingReaderAt struct {
	r     io.ReaderAt
	reads int
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads++
	return c.r.ReadAt(p, off)
}
