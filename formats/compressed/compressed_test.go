package compressed

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// plainData is a stand-in for a tar stream: varied enough to compress
// into several blocks.
func plainData(n int) []byte {
	b := make([]byte, n)
	x := uint32(7)
	for i := range b {
		x = x*1664525 + 1013904223
		b[i] = "abcdefgh\x00tar"[x>>28%12]
	}
	return b
}

// compressWith runs the codec's own command line tool, as users make
// their shards.
func compressWith(t *testing.T, tool string, data []byte) []byte {
	t.Helper()
	cmd := exec.Command(tool, "-1", "-c")
	cmd.Stdin = bytes.NewReader(data)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	return out
}

var tools = []struct {
	tool  string
	codec Codec
}{{"gzip", Gzip}, {"zstd", Zstd}, {"bzip2", Bzip2}, {"xz", Xz}}

func TestDecompressEachCodec(t *testing.T) {
	data := plainData(1<<20 + 123)
	for _, tt := range tools {
		t.Run(tt.tool, func(t *testing.T) {
			z := compressWith(t, tt.tool, data)
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

func TestDecompressCorrupt(t *testing.T) {
	data := plainData(1 << 20)
	for _, tt := range tools {
		t.Run(tt.tool, func(t *testing.T) {
			z := compressWith(t, tt.tool, data)
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

func TestSpool(t *testing.T) {
	dir := t.TempDir()
	data := plainData(2 << 20)
	plain := filepath.Join(dir, "a.tar")
	gz := filepath.Join(dir, "b.tar.gz")
	os.WriteFile(plain, data, 0o644)
	os.WriteFile(gz, compressWith(t, "gzip", data), 0o644)
	if need, err := Needed([]string{plain}); need || err != nil {
		t.Errorf("Needed(plain) = %v, %v", need, err)
	}
	if need, err := Needed([]string{plain, gz}); !need || err != nil {
		t.Errorf("Needed(plain, gzip) = %v, %v", need, err)
	}
	out := t.TempDir()
	s := NewSpool(out, bytes.NewReader(compressWith(t, "zstd", data)))
	if p, err := s.Plain(context.Background(), plain); p != plain || err != nil || s.Codec(plain) != None {
		t.Errorf("a plain shard is itself: %s, %v", p, err)
	}
	// Asked for at once, a shard is decompressed once.
	var wg sync.WaitGroup
	paths := make([]string, 4)
	for k := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			paths[k], _ = s.Plain(context.Background(), gz)
		}()
	}
	wg.Wait()
	for _, p := range paths[1:] {
		if p != paths[0] {
			t.Fatalf("two copies: %s, %s", paths[0], p)
		}
	}
	stdin, err := s.Plain(context.Background(), Stdin)
	if err != nil || s.Codec(Stdin) != Zstd || s.Codec(gz) != Gzip {
		t.Fatalf("stdin: %v, codecs %q %q", err, s.Codec(Stdin), s.Codec(gz))
	}
	for _, p := range []string{paths[0], stdin} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, data) || filepath.Dir(p) != out {
			t.Errorf("%s: not the plain bytes in %s", p, out)
		}
	}
	s.Close()
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left after Close: %v", left)
	}
	if _, err := os.Stat(plain); err != nil {
		t.Errorf("Close removed a plain shard: %v", err)
	}
	var none *Spool
	if p, err := none.Plain(context.Background(), gz); p != gz || err != nil {
		t.Errorf("nil spool: %s, %v", p, err)
	}
}

func TestSpoolCorruptLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	z := compressWith(t, "gzip", plainData(1<<20))
	bad := filepath.Join(dir, "bad.tar.gz")
	os.WriteFile(bad, z[:len(z)-100], 0o644)
	out := t.TempDir()
	s := NewSpool(out, nil)
	if _, err := s.Plain(context.Background(), bad); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Plain: %v", err)
	}
	if left, _ := os.ReadDir(out); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// FuzzDecompress: any bytes either decompress or fail with ErrCorrupt,
// never a panic or another error.
func FuzzDecompress(f *testing.F) {
	data := plainData(4096)
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
	data := plainData(300 << 10)
	z := compressWith(t, "gzip", data)
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
