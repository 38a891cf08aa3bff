package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	gotime "time"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/internal/mapped"
)

type member struct {
	name, link string
	typ        byte
	body       string
	mode       int64
	mtime      gotime.Time
}

func writeTar(t *testing.T, path string, ms []member) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, m := range ms {
		h := &tar.Header{Name: m.name, Linkname: m.link, Typeflag: m.typ, Mode: m.mode, Uid: 1000, Gid: 100, ModTime: m.mtime, Format: tar.FormatPAX}
		if m.typ == tar.TypeReg {
			h.Size = int64(len(m.body))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(m.body))
	}
	tw.Close()
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sampleShards(t *testing.T) (string, []string) {
	dir := t.TempDir()
	when := gotime.Unix(1700000000, 123456789)
	writeTar(t, filepath.Join(dir, "train_0000.tar"), []member{
		{name: "./", typ: tar.TypeDir, mode: 0o755, mtime: when},
		{name: "./imgs/", typ: tar.TypeDir, mode: 0o750, mtime: when},
		{name: "./imgs/a.jpg", typ: tar.TypeReg, body: "jpeg-a", mode: 0o640, mtime: when},
		{name: "./imgs/日本.cls", typ: tar.TypeReg, body: "7", mode: 0o644, mtime: when},
		{name: "./empty.txt", typ: tar.TypeReg, body: "", mode: 0o600, mtime: when},
		{name: "./link", typ: tar.TypeSymlink, link: "imgs/a.jpg", mtime: when},
	})
	writeTar(t, filepath.Join(dir, "train_0001.tar"), []member{
		{name: "deep/er/" + strings.Repeat("x", 150) + ".bin", typ: tar.TypeReg, body: strings.Repeat("z", 3000), mode: 0o644, mtime: when},
		{name: "hard.jpg", typ: tar.TypeLink, link: "./imgs/a.jpg", mtime: when},
	})
	shards, _ := filepath.Glob(filepath.Join(dir, "train_*.tar"))
	return dir, shards
}

// TestTarToBarecatRoundTrip converts tar shards to a Barecat archive (copy
// and wrap), reads it back, and converts it back to tar shards: names,
// bytes and metadata survive.
func TestTarToBarecatRoundTrip(t *testing.T) {
	_, shards := sampleShards(t)
	want := map[string]string{
		"imgs/a.jpg": "jpeg-a", "imgs/日本.cls": "7", "empty.txt": "",
		"deep/er/" + strings.Repeat("x", 150) + ".bin": strings.Repeat("z", 3000),
		"hard.jpg": "jpeg-a",
	}
	for _, wrap := range []bool{false, true} {
		out := filepath.Join(t.TempDir(), "data.barecat")
		st, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Wrap: wrap, Workers: 2})
		if err != nil {
			t.Fatalf("wrap=%v: %v", wrap, err)
		}
		if st.Files != 5 || st.Hardlinks != 1 || st.Skipped["symlink"] != 1 || st.Dirs != 2 {
			t.Errorf("wrap=%v: stats %+v", wrap, st)
		}
		a, err := barecat.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		err = a.Files(context.Background(), barecat.ByPath, func(f barecat.File) error {
			b, err := a.ReadFile(f)
			got[f.Path] = string(b)
			if f.Path == "imgs/a.jpg" && (f.Mode&0o777 != 0o640 || f.UID != 1000 || f.MtimeNs != 1700000000123456789) {
				t.Errorf("wrap=%v: metadata %+v", wrap, f)
			}
			if wrap && f.HasCRC {
				t.Errorf("wrap=%v: %s has a crc without --crc", wrap, f.Path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("wrap=%v: files %v, want %v", wrap, got, want)
		}
		rep, err := a.Verify(context.Background())
		if err != nil || len(rep.Problems) != 0 {
			t.Errorf("wrap=%v: verify %v %+v", wrap, err, rep)
		}
		if wrap {
			if link, err := os.Readlink(barecat.ShardPath(out, 1)); err != nil || filepath.IsAbs(link) {
				t.Errorf("shard 1 is %q (%v), want a relative link", link, err)
			}
		}

		// And back to tar.
		back := filepath.Join(t.TempDir(), "back")
		src := &barecat.Source{Archive: a, Order: barecat.ByPath}
		fst, err := fold.Write(context.Background(), src, fold.WriteOptions{Dir: back, Fold: "train"})
		a.Close()
		if err != nil {
			t.Fatal(err)
		}
		if src.Held() != 0 {
			t.Errorf("%d batches' mappings never released", src.Held())
		}
		entries := readTarDir(t, fst.Shards)
		files := map[string]string{}
		for _, e := range entries {
			if e.typ == tar.TypeReg {
				files[e.name] = e.body
			}
			if e.name == "imgs/a.jpg" && (e.mode != 0o640 || e.mtime != 1700000000 || e.nsec != 123456789) {
				t.Errorf("wrap=%v: back in tar, metadata %+v", wrap, e)
			}
			if e.name == "imgs/" && e.mode != 0o750 {
				t.Errorf("directory metadata lost: %+v", e)
			}
		}
		if fmt.Sprint(files) != fmt.Sprint(want) {
			t.Errorf("wrap=%v: back in tar %v", wrap, files)
		}
		if fst.Index == nil || fst.Index.Rows == 0 {
			t.Errorf("no index for the fold")
		}
	}
}

func TestTarToBarecatDuplicates(t *testing.T) {
	dir := t.TempDir()
	writeTar(t, filepath.Join(dir, "d_0.tar"), []member{{name: "a.txt", typ: tar.TypeReg, body: "one"}})
	writeTar(t, filepath.Join(dir, "d_1.tar"), []member{{name: "./a.txt", typ: tar.TypeReg, body: "two!"}})
	shards := []string{filepath.Join(dir, "d_0.tar"), filepath.Join(dir, "d_1.tar")}
	out := filepath.Join(t.TempDir(), "x.barecat")
	_, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{})
	if !errors.Is(err, barecat.ErrDuplicatePath) || !strings.Contains(err.Error(), "d_0.tar offset 0") || !strings.Contains(err.Error(), "d_1.tar offset 0") {
		t.Fatalf("got %v, want a duplicate error naming both places", err)
	}
	if m, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "*")); len(m) != 0 {
		t.Errorf("left behind: %v", m)
	}
	for policy, body := range map[string]string{DuplicateFirst: "one", DuplicateLast: "two!"} {
		out := filepath.Join(t.TempDir(), "x.barecat")
		st, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{OnDuplicate: policy})
		if err != nil || st.Duplicates != 1 || st.Files != 1 {
			t.Fatalf("%s: %v %+v", policy, err, st)
		}
		a, _ := barecat.Open(out)
		f, err := a.Lookup("a.txt")
		b, _ := a.ReadFile(f)
		a.Close()
		if err != nil || string(b) != body {
			t.Errorf("%s: a.txt is %q, want %q", policy, b, body)
		}
	}
}

func TestTarToBarecatRefusesEscapingPaths(t *testing.T) {
	for _, name := range []string{"../evil.txt", "/etc/evil", "a/../../evil"} {
		dir := t.TempDir()
		writeTar(t, filepath.Join(dir, "e_0.tar"), []member{{name: "ok.txt", typ: tar.TypeReg, body: "x"}, {name: name, typ: tar.TypeReg, body: "bad"}})
		out := filepath.Join(t.TempDir(), "x.barecat")
		_, err := TarToBarecat(context.Background(), []string{filepath.Join(dir, "e_0.tar")}, out, BarecatOptions{})
		if !errors.Is(err, barecat.ErrInvalidPath) || !strings.Contains(err.Error(), "offset 1024") {
			t.Errorf("%q: got %v, want ErrInvalidPath at offset 1024", name, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%q: output exists", name)
		}
	}
}

// TestReuseTars: a wrapped archive's tars get an index without a copy;
// an archive that does not match its tars is refused.
func TestReuseTars(t *testing.T) {
	_, shards := sampleShards(t)
	out := filepath.Join(t.TempDir(), "w.barecat")
	if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{Wrap: true}); err != nil {
		t.Fatal(err)
	}
	a, err := barecat.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	idx := filepath.Join(t.TempDir(), "train.taridx")
	st, err := ReuseTars(context.Background(), a, idx, fold.IndexOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Tars) != 2 || st.Files != 5 || st.Index.Rows != 4 { // a.jpg, 日本.cls, empty.txt, the .bin (the hard link has no payload of its own)
		t.Errorf("tars %v, %d files, %d rows", st.Tars, st.Files, st.Index.Rows)
	}

	// A copied archive's shards are not tars: refused.
	copied := filepath.Join(t.TempDir(), "c.barecat")
	if _, err := TarToBarecat(context.Background(), shards, copied, BarecatOptions{}); err != nil {
		t.Fatal(err)
	}
	c, _ := barecat.Open(copied)
	defer c.Close()
	_, err = ReuseTars(context.Background(), c, filepath.Join(t.TempDir(), "x.taridx"), fold.IndexOptions{})
	if err == nil || !strings.Contains(err.Error(), "not") {
		t.Errorf("got %v, want a refusal", err)
	}
}

// TestBarecatToTarChecksCRC: a flipped byte in a Barecat shard stops the
// conversion back to tar with the archive's CRC error, and leaves no fold.
func TestBarecatToTarChecksCRC(t *testing.T) {
	_, shards := sampleShards(t)
	out := filepath.Join(t.TempDir(), "d.barecat")
	if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{}); err != nil {
		t.Fatal(err)
	}
	shard := barecat.ShardPath(out, 0)
	b, _ := os.ReadFile(shard)
	b[len(b)-1] ^= 0xff // the last byte of the last file
	os.WriteFile(shard, b, 0o644)
	a, err := barecat.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	dir := filepath.Join(t.TempDir(), "back")
	_, err = fold.Write(context.Background(), &barecat.Source{Archive: a, Order: barecat.ByAddress}, fold.WriteOptions{Dir: dir})
	if !errors.Is(err, barecat.ErrCRC) {
		t.Fatalf("got %v, want ErrCRC", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

// TestBarecatToTarShardShrank: a wrapped archive (no crc32c: the workers do
// not read the bytes) whose tar is cut short after the archive was opened
// fails with mapped.ErrGone naming the archive, small files and large
// alike, and leaves nothing behind: no crash on the lost pages.
func TestBarecatToTarShardShrank(t *testing.T) {
	for _, size := range []int{100, 10 << 10} {
		dir := t.TempDir()
		var ms []member
		for i := range 64 {
			ms = append(ms, member{name: fmt.Sprintf("f%03d.bin", i), typ: tar.TypeReg, mode: 0o644,
				body: strings.Repeat(string(rune('a'+i%26)), size)})
		}
		tarPath := filepath.Join(dir, "in.tar")
		writeTar(t, tarPath, ms)
		out := filepath.Join(dir, "w.barecat")
		if _, err := TarToBarecat(context.Background(), []string{tarPath}, out, BarecatOptions{Wrap: true}); err != nil {
			t.Fatal(err)
		}
		a, err := barecat.Open(out)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(tarPath, 4096); err != nil {
			t.Fatal(err)
		}
		back := filepath.Join(dir, "back")
		_, err = fold.Write(context.Background(), &barecat.Source{Archive: a, Order: barecat.ByAddress}, fold.WriteOptions{Dir: back})
		a.Close()
		if !errors.Is(err, mapped.ErrGone) || !strings.Contains(err.Error(), out) {
			t.Fatalf("%d-byte files: got %v, want mapped.ErrGone naming %s", size, err, out)
		}
		if entries, _ := os.ReadDir(back); len(entries) != 0 {
			t.Errorf("left behind: %v", entries)
		}
	}
}

// TestBarecatSourceServesOneRun: a second Run with the same source says so
// instead of waiting forever for chunks the first Run took.
func TestBarecatSourceServesOneRun(t *testing.T) {
	_, shards := sampleShards(t)
	out := filepath.Join(t.TempDir(), "d.barecat")
	if _, err := TarToBarecat(context.Background(), shards, out, BarecatOptions{}); err != nil {
		t.Fatal(err)
	}
	a, err := barecat.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	src := &barecat.Source{Archive: a, Order: barecat.ByPath}
	if _, err := fold.Write(context.Background(), src, fold.WriteOptions{Dir: filepath.Join(t.TempDir(), "1")}); err != nil {
		t.Fatal(err)
	}
	_, err = fold.Write(context.Background(), src, fold.WriteOptions{Dir: filepath.Join(t.TempDir(), "2")})
	if err == nil || !strings.Contains(err.Error(), "serves one Run") {
		t.Fatalf("second run: %v", err)
	}
}
