package convert

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/spool"
)

// workersShards writes tar shards of many members of every size a TBL
// run handles apart (empty, small, over 64 KiB), a directory and, with
// links, hard links; and the same shards gzip-compressed.
func workersShards(t *testing.T, links bool) (plain, gz []string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewSource(26))
	for s := range 5 {
		var buf bytes.Buffer
		tw := tar.NewWriter(&buf)
		for i := range 700 {
			exts := []string{"jpg", "cls", "png", "json"}
			name := fmt.Sprintf("s%d/%05d.%s", s, i, exts[i%4])
			var body []byte
			switch {
			case i%97 == 0:
				body = make([]byte, 64<<10+rng.Intn(100<<10))
			case i%5 == 0:
			default:
				body = make([]byte, rng.Intn(400))
			}
			rng.Read(body[:len(body)/2]) // half compressible
			hdr := &tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(len(body)), Mode: 0o644}
			if links && i%50 == 49 {
				hdr = &tar.Header{Name: name + ".link", Typeflag: tar.TypeLink, Linkname: fmt.Sprintf("s%d/%05d.%s", s, i-1, exts[(i-1)%4])}
				body = nil
			}
			if i == 300 {
				tw.WriteHeader(&tar.Header{Name: fmt.Sprintf("s%d/dir/", s), Typeflag: tar.TypeDir, Mode: 0o755})
			}
			if err := tw.WriteHeader(hdr); err != nil {
				t.Fatal(err)
			}
			tw.Write(body)
		}
		tw.Close()
		p := filepath.Join(dir, fmt.Sprintf("train_%04d.tar", s))
		if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		var zb bytes.Buffer
		zw := gzip.NewWriter(&zb)
		zw.Write(buf.Bytes())
		zw.Close()
		if err := os.WriteFile(p+".gz", zb.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		plain, gz = append(plain, p), append(gz, p+".gz")
	}
	return plain, gz
}

// TestTarToTBLWorkersAndMemory: tar shards, plain or gzip-compressed,
// make the same TBL file, byte for byte, with one worker or four, and
// with a metadata budget of one byte (which spills the metadata section
// where its start is not known before the end: with LZ4, or hard links).
func TestTarToTBLWorkersAndMemory(t *testing.T) {
	for _, links := range []bool{false, true} {
		plain, gz := workersShards(t, links)
		for _, o := range []TBLOptions{{Version: 2}, {Version: 2, LZ4: true}, {Version: 1}} {
			var want []byte
			for _, c := range []struct {
				workers int
				memory  int64
				gz      bool
			}{{1, 0, false}, {4, 0, false}, {4, 1, false}, {1, 1, false}, {4, 1, true}} {
				oo := o
				oo.Workers, oo.Memory = c.workers, c.memory
				shards := plain
				if c.gz {
					shards = gz
					oo.Spool = spool.New(t.TempDir(), os.Stdin)
				}
				out := filepath.Join(t.TempDir(), "o.tbl")
				st, err := TarToTBL(context.Background(), shards, out, oo)
				oo.Spool.Close()
				if err != nil {
					t.Fatalf("links %v %+v: %v", links, oo, err)
				}
				if st.Samples != 5*700 || (st.Hardlinks > 0) != links || st.Skipped["dir"] != 5 {
					t.Errorf("links %v %+v: stats %+v", links, oo, st)
				}
				got, err := os.ReadFile(out)
				if err != nil {
					t.Fatal(err)
				}
				if want == nil {
					want = got
				} else if !bytes.Equal(got, want) {
					t.Errorf("links %v %+v (gzip %v): %d bytes differ from one worker's %d", links, oo, c.gz, len(got), len(want))
				}
			}
		}
	}
}
