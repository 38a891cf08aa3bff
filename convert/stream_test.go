package convert

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/spool"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// streamShard is a tar stream with a long pax name, a directory, a
// sub-second time and payloads of several sizes.
func streamShard(t *testing.T) ([]byte, map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	want := map[string]string{}
	tw.WriteHeader(&tar.Header{Name: "d/", Typeflag: tar.TypeDir, Mode: 0o755})
	for i := range 50 {
		name := fmt.Sprintf("d/s%04d.jpg", i)
		if i == 7 {
			name = "d/" + string(bytes.Repeat([]byte("long"), 40)) + ".jpg"
		}
		body := bytes.Repeat([]byte{byte(i)}, i*97)
		want[name] = string(body)
		h := &tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: int64(len(body)), ModTime: mtime(1700000000, i*1000), Format: tar.FormatPAX}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		tw.Write(body)
	}
	tw.Close()
	return buf.Bytes(), want
}

// filesOf reads a tar stream's regular files.
func filesOf(t *testing.T, r io.Reader) map[string]string {
	t.Helper()
	out := map[string]string{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			b, _ := io.ReadAll(tr)
			out[h.Name] = string(b)
		}
	}
}

// TestStreams: a tar stream on standard input, plain or compressed,
// converts as the same shard in a file does; any dataset converts to one
// tar stream on standard output, and nothing is left beside the output.
func TestStreams(t *testing.T) {
	plain, want := streamShard(t)
	dir := t.TempDir()
	shard := filepath.Join(dir, "in.tar")
	os.WriteFile(shard, plain, 0o644)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	enc, _ := zstd.NewWriter(nil)
	zst := enc.EncodeAll(plain, nil)

	ctx := context.Background()
	ref := filepath.Join(dir, "ref.tbl")
	if _, err := Convert(ctx, []string{shard}, ref, ConvertOptions{}); err != nil {
		t.Fatal(err)
	}
	refBytes, _ := os.ReadFile(ref)
	for name, in := range map[string][]byte{"plain": plain, "gzip": gz.Bytes(), "zstd": zst} {
		t.Run(name, func(t *testing.T) {
			out := t.TempDir()
			got := filepath.Join(out, "x.tbl")
			if _, err := Convert(ctx, []string{"-"}, got, ConvertOptions{Stdin: bytes.NewReader(in)}); err != nil {
				t.Fatal(err)
			}
			if b, _ := os.ReadFile(got); !bytes.Equal(b, refBytes) {
				t.Errorf("TBL from standard input differs from the file's")
			}
			if left, _ := os.ReadDir(out); len(left) != 1 {
				t.Errorf("beside the output: %v", left)
			}
			// Standard input to standard output: the same files.
			var stdout bytes.Buffer
			if _, err := Convert(ctx, []string{"-"}, Stream, ConvertOptions{Stdin: bytes.NewReader(in), Stdout: &stdout}); err != nil {
				t.Fatal(err)
			}
			if got := filesOf(t, &stdout); !reflect.DeepEqual(got, want) {
				t.Errorf("the stream's files differ from the input's")
			}
		})
	}
	// An empty standard input is no tar stream, and leaves nothing.
	empty := t.TempDir()
	if _, err := Convert(ctx, []string{"-"}, filepath.Join(empty, "x.tbl"), ConvertOptions{Stdin: bytes.NewReader(nil)}); !errors.Is(err, spool.ErrEmptyStdin) {
		t.Errorf("empty stdin: %v", err)
	}
	if left, _ := os.ReadDir(empty); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	// A TBL, to a stream.
	var stdout bytes.Buffer
	res, err := Convert(ctx, []string{ref}, Stream, ConvertOptions{Stdout: &stdout})
	if err != nil {
		t.Fatal(err)
	}
	if got := filesOf(t, &stdout); !reflect.DeepEqual(got, want) {
		t.Errorf("TBL to a stream: the files differ")
	}
	if st := res.Stats.(*fold.StreamStats); st.Members != 50 {
		t.Errorf("stats %+v", st)
	}
}
