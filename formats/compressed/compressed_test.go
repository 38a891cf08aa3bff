package compressed

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

var tools = []struct {
	tool  string
	codec Codec
}{{"gzip", Gzip}, {"zstd", Zstd}, {"bzip2", Bzip2}, {"xz", Xz}}

func TestDecompressEachCodec(t *testing.T) {
	data := testutil.PlainData(1<<20 + 123)
	for _, tt := range tools {
		t.Run(tt.tool, func(t *testing.T) {
			z := testutil.CompressWith(t, tt.tool, data)
			if c := Sniff(z); c != tt.codec {
				t.Fatalf("Sniff = %q, want %q", c, tt.codec)
			}
			path := filepath.Join(t.TempDir(), "shard.bin") // any name: told by its bytes
			os.WriteFile(path, z, 0o644)
			var out bytes.Buffer
			c, n, err := DecompressFile(context.Background(), path, &out)
			if err != nil || c != tt.codec || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
				t.Fatalf("DecompressFile: %q, %d bytes, %v", c, n, err)
			}
			// Two streams one after the other read as one, as the tools do.
			os.WriteFile(path, append(append([]byte{}, z...), z...), 0o644)
			out.Reset()
			if _, n, err := DecompressFile(context.Background(), path, &out); err != nil || n != 2*int64(len(data)) {
				t.Fatalf("concatenated: %d bytes, %v", n, err)
			}
		})
	}
}

// TestDecompressStream: a stream's codec is told by its first bytes, as a
// file's is; a plain stream is copied as it is, an empty one gives nothing.
func TestDecompressStream(t *testing.T) {
	data := testutil.PlainData(1<<20 + 123)
	for _, tt := range append(tools, struct {
		tool  string
		codec Codec
	}{"", None}) {
		in := data
		if tt.tool != "" {
			in = testutil.CompressWith(t, tt.tool, data)
		}
		var out bytes.Buffer
		c, n, err := DecompressStream(context.Background(), "stream", bytes.NewReader(in), &out)
		if err != nil || c != tt.codec || n != int64(len(data)) || !bytes.Equal(out.Bytes(), data) {
			t.Errorf("%q: %q, %d bytes, %v", tt.tool, c, n, err)
		}
	}
	if c, n, err := DecompressStream(context.Background(), "empty", bytes.NewReader(nil), io.Discard); c != None || n != 0 || err != nil {
		t.Errorf("empty: %q, %d bytes, %v", c, n, err)
	}
	z := testutil.CompressWith(t, "gzip", data)
	if _, _, err := DecompressStream(context.Background(), "cut", bytes.NewReader(z[:len(z)/2]), io.Discard); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "cut: compressed offset") {
		t.Errorf("a cut stream: %v", err)
	}
}

func TestDecompressCorrupt(t *testing.T) {
	data := testutil.PlainData(1 << 20)
	for _, tt := range tools {
		t.Run(tt.tool, func(t *testing.T) {
			z := testutil.CompressWith(t, tt.tool, data)
			path := filepath.Join(t.TempDir(), "x.tar.z")
			for _, c := range []struct {
				name  string
				bytes []byte
			}{
				{"truncated", z[:len(z)/2]},
				{"flipped", flip(z, len(z)/3)},
			} {
				os.WriteFile(path, c.bytes, 0o644)
				_, _, err := DecompressFile(context.Background(), path, &bytes.Buffer{})
				if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "compressed offset") {
					t.Errorf("%s: %v, want ErrCorrupt naming the file and offset", c.name, err)
				}
			}
		})
	}
}

func flip(b []byte, at int) []byte {
	c := append([]byte{}, b...)
	for i := at; i < at+16 && i < len(c); i++ {
		c[i] ^= 0x5a
	}
	return c
}

// FuzzDecompress: any bytes either decompress or fail with ErrCorrupt,
// never a panic or another error.
func FuzzDecompress(f *testing.F) {
	data := testutil.PlainData(4096)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(data)
	zw.Close()
	f.Add(gz.Bytes())
	enc, _ := zstd.NewWriter(nil)
	f.Add(enc.EncodeAll(data, nil))
	f.Add([]byte("BZh91AY&SY"))
	f.Add([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 4})
	f.Fuzz(func(t *testing.T, b []byte) {
		c := Sniff(b)
		if c == None {
			return
		}
		var out limited
		_, err := Decompress(context.Background(), "fuzz", bytes.NewReader(b), c, &out)
		if err != nil && !errors.Is(err, ErrCorrupt) && !errors.Is(err, errTooLong) {
			t.Fatalf("%s: %v", c, err)
		}
	})
}

var errTooLong = errors.New("fuzz output past its bound")

// limited stops a decompression bomb among the fuzzer's inputs.
type limited struct{ n int }

func (l *limited) Write(p []byte) (int, error) {
	if l.n += len(p); l.n > 4<<20 {
		return 0, errTooLong
	}
	return len(p), nil
}

// TestGzipPadding: zero bytes after the last gzip member are padding, as
// gzip takes them; other bytes after the padding are a corrupt stream.
func TestGzipPadding(t *testing.T) {
	data := testutil.PlainData(300 << 10)
	z := testutil.CompressWith(t, "gzip", data)
	for _, tt := range []struct {
		name  string
		file  []byte
		want  int
		wants error
	}{
		{"padded", append(append([]byte{}, z...), make([]byte, 10240)...), 1, nil},
		{"two members, padded", append(append(append([]byte{}, z...), z...), make([]byte, 512)...), 2, nil},
		{"garbage after padding", append(append(append([]byte{}, z...), make([]byte, 512)...), 'x'), 0, ErrCorrupt},
	} {
		path := filepath.Join(t.TempDir(), "p.tar.gz")
		os.WriteFile(path, tt.file, 0o644)
		var out bytes.Buffer
		_, n, err := DecompressFile(context.Background(), path, &out)
		if tt.wants != nil {
			if !errors.Is(err, tt.wants) {
				t.Errorf("%s: %v, want %v", tt.name, err, tt.wants)
			}
			continue
		}
		if err != nil || n != int64(tt.want*len(data)) || !bytes.Equal(out.Bytes()[:len(data)], data) {
			t.Errorf("%s: %d bytes, %v", tt.name, n, err)
		}
	}
}

// TestDetectFile: a file's codec is told by its bytes, whatever its name;
// a missing file is an error naming it.
func TestDetectFile(t *testing.T) {
	dir := t.TempDir()
	data := testutil.PlainData(4096)
	for _, tt := range tools {
		p := filepath.Join(dir, "shard-"+tt.tool+".tar") // a misleading name
		os.WriteFile(p, testutil.CompressWith(t, tt.tool, data), 0o644)
		if c, err := DetectFile(p); c != tt.codec || err != nil {
			t.Errorf("%s: %q, %v", tt.tool, c, err)
		}
	}
	for _, b := range [][]byte{data, nil, {0x1f}} { // plain, empty, shorter than any magic
		p := filepath.Join(dir, "plain.tar.gz")
		os.WriteFile(p, b, 0o644)
		if c, err := DetectFile(p); c != None || err != nil {
			t.Errorf("%d plain bytes: %q, %v", len(b), c, err)
		}
	}
	missing := filepath.Join(dir, "missing.tar")
	if _, err := DetectFile(missing); !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing: %v", err)
	}
}

// TestDecompressWriter: the writer's failure (a full disk) is told as the
// writer's, not as a corrupt stream; a canceled context stops the copy;
// the gzip reader reads member after member through Read as well.
func TestDecompressWriter(t *testing.T) {
	data := testutil.PlainData(1 << 20)
	z := testutil.CompressWith(t, "gzip", data)
	full := errors.New("no space left")
	_, err := Decompress(context.Background(), "a.tar.gz", bytes.NewReader(z), Gzip, failingWriter{full})
	if !errors.Is(err, full) || errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "a.tar.gz: writing its decompressed bytes") {
		t.Errorf("a failing writer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Decompress(ctx, "a.tar.gz", bytes.NewReader(z), Gzip, io.Discard); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: %v", err)
	}
	r, err := NewReader(bytes.NewReader(append(append([]byte{}, z...), z...)), Gzip)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	got, err := io.ReadAll(struct{ io.Reader }{r}) // Read, not WriteTo
	if err != nil || !bytes.Equal(got, append(append([]byte{}, data...), data...)) {
		t.Errorf("Read of two members: %d bytes, %v", len(got), err)
	}
	if _, err := NewReader(bytes.NewReader(z), "lz4"); err == nil {
		t.Errorf("an unknown codec was taken")
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }
