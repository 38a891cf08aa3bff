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
