package parquet

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/registry"
)

// goRow is a row parquet-go writes from a Go struct, with the encodings
// its tags ask for.
type goRow struct {
	Key   string  `parquet:"__key__,dict"`
	Label int64   `parquet:"label,delta"`
	Text  string  `parquet:"text,optional,delta"` // "" is NULL
	Blob  []byte  `parquet:"blob,plain"`
	Score float32 `parquet:"score,split"`
	Small int32   `parquet:"small,dict"`
	Flag  bool    `parquet:"flag"`
	Image *struct {
		Bytes []byte  `parquet:"bytes"`
		Path  *string `parquet:"path,optional"`
	} `parquet:"image,optional"`
}

// TestReadParquetGoEncodings: files parquet-go writes with dictionary,
// delta and plain encodings, data pages v1 and v2, and each codec read
// back as their values.
func TestReadParquetGoEncodings(t *testing.T) {
	var rows []goRow
	var want []formattest.File
	for i := range 50 {
		k := fmt.Sprintf("s%03d", i)
		r := goRow{Key: k, Label: int64(i*i - 100), Blob: bytes.Repeat([]byte{byte(i)}, i), Score: float32(i) / 4, Small: int32(i % 3), Flag: i%2 == 0}
		want = append(want, f(k+".label", fmt.Sprint(r.Label)))
		if i%3 != 0 {
			s := fmt.Sprintf("text %d", i)
			r.Text = s
			want = append(want, f(k+".text", s))
		}
		want = append(want, f(k+".blob", string(r.Blob)), f(k+".score", fmt.Sprint(r.Score)), f(k+".small", fmt.Sprint(r.Small)), f(k+".flag", fmt.Sprint(r.Flag)))
		if i%4 != 0 {
			p := "x/img.PNG"
			r.Image = &struct {
				Bytes []byte  `parquet:"bytes"`
				Path  *string `parquet:"path,optional"`
			}{[]byte(fmt.Sprintf("image %d", i)), &p}
			want = append(want, f(k+".png", fmt.Sprintf("image %d", i)))
		}
		rows = append(rows, r)
	}
	// The members come in the columns' order: parquet-go sorts a
	// struct's fields by their order in the struct.
	for _, c := range []struct {
		name  string
		codec compress.Codec
		page  int
	}{{"snappy-v1", &pq.Snappy, 1}, {"zstd-v2", &pq.Zstd, 2}, {"gzip-v2", &pq.Gzip, 2}, {"none-v1", &pq.Uncompressed, 1}, {"brotli-v2", &pq.Brotli, 2}} {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), c.name+".parquet")
			var buf bytes.Buffer
			w := pq.NewGenericWriter[goRow](&buf, pq.Compression(c.codec), pq.DataPageVersion(c.page), pq.PageBufferSize(256), pq.MaxRowsPerRowGroup(16))
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			got := readMembers(t, p)
			// Order the wanted members as the columns come in the file.
			sameFiles(t, got, byColumns(want, []string{"label", "text", "blob", "score", "small", "flag", "png"}))
		})
	}
}

// byColumns orders each sample's members by the order of their
// extensions in cols.
func byColumns(files []formattest.File, cols []string) []formattest.File {
	rank := map[string]int{}
	for i, c := range cols {
		rank[c] = i
	}
	out := append([]formattest.File(nil), files...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0; j-- {
			ka, ea, _ := splitName([]byte(out[j-1].Name))
			kb, eb, _ := splitName([]byte(out[j].Name))
			if string(ka) != string(kb) || rank[string(ea)] <= rank[string(eb)] {
				break
			}
			out[j-1], out[j] = out[j], out[j-1]
		}
	}
	return out
}

// TestSplits: a Hub directory of several splits reads each under its
// name, as the datasets library names splits from file names (the
// push_to_hub pattern first, then the keywords), in its order; one split
// reads alone under --parquet-split.
func TestSplits(t *testing.T) {
	write := func(t *testing.T, dir, split string, files []formattest.File) {
		t.Helper()
		out := filepath.Join(t.TempDir(), "pq")
		if _, err := convert(t, "tar", tarShards(t, files), "parquet", out, registry.CreateOptions{Format: CreateOptions{Split: split}}); err != nil {
			t.Fatal(err)
		}
		src := filepath.Join(out, "data", HubName(split, 0, 1))
		dst := filepath.Join(dir, "data", HubName(split, 0, 1))
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Rename(src, dst); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	write(t, dir, "test", []formattest.File{f("t0.txt", "test0")})
	write(t, dir, "train", []formattest.File{f("a.txt", "train a"), f("b.txt", "train b")})
	write(t, dir, "extra", []formattest.File{f("e.txt", "extra")})
	// A file beside them that the pattern does not name is not read.
	os.WriteFile(filepath.Join(dir, "data", "notes.parquet"), []byte("not read"), 0o644)
	sameFiles(t, readMembers(t, dir), []formattest.File{f("train/a.txt", "train a"), f("train/b.txt", "train b"),
		f("test/t0.txt", "test0"), f("extra/e.txt", "extra")})

	d, err := registry.Lookup("parquet").Open([]string{dir}, registry.OpenOptions{Format: OpenOptions{Split: "test"}})
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.ReadEntry("t0.txt")
	d.Close()
	if err != nil || string(b) != "test0" {
		t.Errorf("split test: t0.txt: %q, %v", b, err)
	}
	if _, err := registry.Lookup("parquet").Open([]string{dir}, registry.OpenOptions{Format: OpenOptions{Split: "dev"}}); !errors.Is(err, ErrNoSplit) {
		t.Errorf("split dev: %v, want ErrNoSplit", err)
	}

	// Keywords: a directory "valid" and a file "my_test.parquet".
	kw := t.TempDir()
	for _, c := range []struct{ rel, split string }{{"valid/x.parquet", "validation"}, {"my_test.parquet", "test"}, {"training-1.parquet", "train"}} {
		write(t, kw, c.split, []formattest.File{f("k.txt", c.split)})
		os.MkdirAll(filepath.Dir(filepath.Join(kw, c.rel)), 0o755)
		if err := os.Rename(filepath.Join(kw, "data", HubName(c.split, 0, 1)), filepath.Join(kw, c.rel)); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(kw, "data"))
	sameFiles(t, readMembers(t, kw), []formattest.File{f("train/k.txt", "train"), f("validation/k.txt", "validation"), f("test/k.txt", "test")})
}

// TestRefuseLZ4: a file of LZ4 pages is refused when opened, before
// parquet-go's LZ4 decoder, which grows its output without bound on
// damaged bytes, reads one.
func TestRefuseLZ4(t *testing.T) {
	var buf bytes.Buffer
	w := pq.NewGenericWriter[goRow](&buf, pq.Compression(&pq.Lz4Raw))
	w.Write([]goRow{{Key: "a"}})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "lz4.parquet")
	os.WriteFile(p, buf.Bytes(), 0o644)
	if _, err := Open(p); !errors.Is(err, ErrFormat) {
		t.Errorf("Open: %v, want ErrFormat", err)
	}
}

// TestClaimedSizes: a footer length, a page size or a Snappy length
// larger than the file holds is refused before anything of that size is
// allocated.
func TestClaimedSizes(t *testing.T) {
	orig, err := os.ReadFile(filepath.Join("testdata", "duckdb-snappy.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	footer := func(b []byte) { b[len(b)-8], b[len(b)-7], b[len(b)-6], b[len(b)-5] = 0xff, 0xff, 0xff, 0x7f }
	for name, damage := range map[string]func([]byte){"footer": footer} {
		b := bytes.Clone(orig)
		damage(b)
		p := filepath.Join(t.TempDir(), name+".parquet")
		os.WriteFile(p, b, 0o644)
		if _, err := Open(p); !errors.Is(err, ErrFormat) || !bytes.Contains([]byte(err.Error()), []byte("offset")) {
			t.Errorf("%s: %v, want ErrFormat at an offset", name, err)
		}
	}
}

// TestCheckLists: a footer whose list claims more elements than it has
// bytes is refused before parquet-go would allocate them; the footers
// DuckDB writes pass.
func TestCheckLists(t *testing.T) {
	// Field 1, a list of structs claiming 2^32-1 elements.
	huge := []byte{0x19, 0xfc, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00}
	if err := checkLists(huge); !errors.Is(err, errLists) {
		t.Errorf("checkLists(%x) = %v, want errLists", huge, err)
	}
	for name := range duckdbOptions {
		b, err := os.ReadFile(filepath.Join("testdata", "duckdb-"+name+".parquet"))
		if err != nil {
			t.Fatal(err)
		}
		n := int(b[len(b)-8]) | int(b[len(b)-7])<<8 | int(b[len(b)-6])<<16 | int(b[len(b)-5])<<24
		if err := checkLists(b[len(b)-8-n : len(b)-8]); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}
