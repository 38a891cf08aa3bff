package tbl

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestAddPreparedMatchesAddImage: preparing samples apart (as a parallel
// converter does) writes the same bytes as AddImage, for every version and
// compression setting.
func TestAddPreparedMatchesAddImage(t *testing.T) {
	samples := [][]byte{nil, []byte("x"), bytes.Repeat([]byte("abcd"), 5000), []byte("incompressible?!")}
	for _, opts := range []WriterOptions{{Version: 1}, {Version: 2}, {Version: 2, LZ4: true}} {
		dir := t.TempDir()
		write := func(name string, prepared bool) []byte {
			o := opts
			o.NumSamples = len(samples)
			w, err := Create(filepath.Join(dir, name), o)
			if err != nil {
				t.Fatal(err)
			}
			for i, s := range samples {
				var meta []MetaEntry
				if opts.Version == 2 {
					meta = []MetaEntry{NameMeta("s" + string(rune('0'+i)))}
				}
				if prepared {
					p, err := PrepareSample(opts.Version, opts.LZ4, JPEG, 3, 4, s)
					if err == nil {
						err = w.AddPrepared(p, meta)
					}
					if err != nil {
						t.Fatal(err)
					}
				} else if err := w.AddImage(JPEG, 3, 4, bytes.NewReader(s), int64(len(s)), meta); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(filepath.Join(dir, name))
			return b
		}
		if a, b := write("a.tbl", false), write("b.tbl", true); !bytes.Equal(a, b) || len(a) == 0 {
			t.Errorf("%+v: AddPrepared differs from AddImage", opts)
		}
	}
}

// TestPreparedReleaseOnce: releasing a Prepared and a copy of it gives the
// LZ4 buffer back once, so that two later samples never share it.
func TestPreparedReleaseOnce(t *testing.T) {
	data := bytes.Repeat([]byte("compressible "), 400)
	p, err := PrepareSample(2, true, JPEG, 0, 0, data)
	if err != nil || !p.Compressed {
		t.Fatalf("%v, compressed %v", err, p.Compressed)
	}
	q := p
	p.Release()
	q.Release()
	if p.Stored != nil || q.Stored != nil {
		t.Error("Stored kept after Release")
	}
	a, _ := PrepareSample(2, true, JPEG, 0, 0, data)
	b, _ := PrepareSample(2, true, JPEG, 0, 0, bytes.Repeat([]byte("other text "), 400))
	if !a.Compressed || !b.Compressed || &a.Stored[0] == &b.Stored[0] {
		t.Fatal("two samples share one LZ4 buffer")
	}
}
