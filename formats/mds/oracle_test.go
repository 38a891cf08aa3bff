package mds_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/mds"
	"github.com/itarconv/itarconv/formats/registry"

	// The formats a dataset converts to, registered.
	_ "github.com/itarconv/itarconv/fold"
	_ "github.com/itarconv/itarconv/formats/barecat"
	_ "github.com/itarconv/itarconv/formats/tbl"
)

// expected is what testdata/oracle/write_mosaic.py says a dataset that
// MosaicML's MDSWriter wrote holds: its members, in order.
type expected struct {
	Members [][3]string `json:"members"`
}

type member struct {
	name string
	data []byte
}

// readRows reads a dataset's members through its rows.
func readRows(t *testing.T, path string) ([]member, error) {
	t.Helper()
	d, err := mds.Open(path)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	src, err := d.Rows(false)
	if err != nil {
		return nil, err
	}
	var got []member
	err = dataset.Run(context.Background(), src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		b, err := dataset.ReadPayload(src, r)
		got = append(got, member{string(r.Name), b})
		return err
	}), dataset.Options{Workers: 2})
	return got, err
}

// TestReadMosaic: every dataset MosaicML's own writer wrote (each
// encoding; plain, zstd, gzip, bzip2 and snappy shards; md5, sha1,
// sha256 and xxh64 hashes) reads as the members its writer was given:
// bytes as encoded, numbers as their value. Brotli is refused as
// unsupported, and a hash not computed (xxh3_64) is a warning.
func TestReadMosaic(t *testing.T) {
	manifests, _ := filepath.Glob("testdata/mosaic/*.json")
	if len(manifests) < 9 {
		t.Fatalf("%d datasets in testdata/mosaic", len(manifests))
	}
	for _, m := range manifests {
		dir := strings.TrimSuffix(m, ".json")
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var want expected
			b, err := os.ReadFile(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			got, err := readRows(t, dir)
			if strings.HasSuffix(dir, "_br") {
				if !errors.Is(err, mds.ErrUnsupported) || !strings.Contains(err.Error(), `compression "br"`) {
					t.Fatalf("brotli shards: %v, want ErrUnsupported naming the compression", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want.Members) {
				t.Fatalf("%d members, want %d", len(got), len(want.Members))
			}
			for i, w := range want.Members {
				g := got[i]
				if g.name != w[0] {
					t.Fatalf("member %d: %q, want %q", i, g.name, w[0])
				}
				switch w[1] {
				case "sha256":
					sum := sha256.Sum256(g.data)
					if hex.EncodeToString(sum[:]) != w[2] {
						t.Errorf("%s: %d bytes of another digest", g.name, len(g.data))
					}
				case "int":
					if string(g.data) != w[2] {
						t.Errorf("%s: %q, want %s", g.name, g.data, w[2])
					}
				case "float":
					// A float reads as the shortest text that parses back
					// to it at its precision (as numpy prints it): a
					// float16's within half its last place (2^-11).
					bits := 64
					if !strings.HasSuffix(g.name, "float64") {
						bits = 32
					}
					gv, err1 := strconv.ParseFloat(string(g.data), bits)
					wv, err2 := strconv.ParseFloat(w[2], 64)
					same := gv == wv
					if strings.HasSuffix(g.name, "float16") {
						same = math.Abs(gv-wv) <= math.Abs(wv)/2048
					}
					if err1 != nil || err2 != nil || !same {
						t.Errorf("%s: %q, want %s", g.name, g.data, w[2])
					}
				}
			}
			rep, err := mds.Verify(context.Background(), dir)
			if err != nil {
				t.Fatalf("Verify: %v", err)
			}
			d, _ := mds.Open(dir)
			warned := strings.Join(d.Warnings(), "\n")
			if hasXXH3 := strings.Contains(dir, "compressed_"); hasXXH3 != strings.Contains(warned, "xxh3_64") {
				t.Errorf("warnings %q", warned)
			}
			if r := rep.(*mds.Report); r.Members != int64(len(want.Members)) {
				t.Errorf("Verify read %d members, want %d", r.Members, len(want.Members))
			}
		})
	}
}

// TestMosaicToEveryFormat: a dataset MosaicML's writer wrote converts to
// every registered format that writes, and reads back from it as the
// same members.
func TestMosaicToEveryFormat(t *testing.T) {
	src := "testdata/mosaic/keyed"
	want, err := readRows(t, src)
	if err != nil {
		t.Fatal(err)
	}
	from, err := mds.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer from.Close()
	n := 0
	for _, f := range registry.All() {
		if f.Create == nil || f.Open == nil {
			continue
		}
		t.Run(f.Name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out."+f.Name)
			if _, err := f.Create(context.Background(), from, out, registry.CreateOptions{Workers: 2}); err != nil {
				t.Fatalf("Create: %v", err)
			}
			ds, err := f.Open([]string{out}, registry.OpenOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer ds.Close()
			rows, err := ds.Rows(false)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			err = dataset.Run(context.Background(), rows, dataset.RowFunc(func(_ int, r *dataset.Row) error {
				if r.Kind != dataset.KindFile {
					return nil
				}
				var b []byte
				var err error
				if r.Inline != nil {
					b = r.Inline
				} else {
					b, err = dataset.ReadPayload(rows, r)
				}
				got[string(r.Name)] = string(b)
				return err
			}), dataset.Options{Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range want {
				if g, ok := got[m.name]; !ok || g != string(m.data) {
					t.Errorf("%s: %q missing or other bytes (%d members)", f.Name, m.name, len(got))
				}
			}
		})
		n++
	}
	if n < 2 {
		t.Errorf("%d formats written", n)
	}
}
