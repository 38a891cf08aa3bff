package tbl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/formats/registry"
)

// TestOpenThroughRegistry: TurboLoader's own files, v2 raw and with LZ4,
// list and read the same samples by the same names through the registry.
func TestOpenThroughRegistry(t *testing.T) {
	f := registry.Lookup("tbl")
	dir := filepath.Join("testdata", "conformance", "tbl", "c01_mixed")
	type entry struct {
		name, format string
		sample       int
		size         int64
		data         []byte
	}
	read := func(file string) []entry {
		path := filepath.Join(dir, file)
		d, err := f.Open([]string{path}, registry.OpenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		var got []entry
		err = d.List(context.Background(), func(e registry.Entry) error {
			data, err := d.ReadEntry(e.Name)
			got = append(got, entry{e.Name, e.Fields[1].Value.(string), e.Fields[0].Value.(int), e.Size, data})
			return err
		})
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if _, err := d.ReadEntry("nope.jpg"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: ReadEntry(nope.jpg): %v", file, err)
		}
		if d.Unit() != "samples" || d.Size() == 0 {
			t.Errorf("%s: unit %q, size %d", file, d.Unit(), d.Size())
		}
		return got
	}
	v1, lz4 := read("c01_mixed.v2raw.tbl"), read("c01_mixed.v2lz4.tbl")
	if len(v1) == 0 || len(v1) != len(lz4) {
		t.Fatalf("%d samples raw, %d with LZ4", len(v1), len(lz4))
	}
	for i := range v1 {
		a, b := v1[i], lz4[i]
		if a.sample != i || !strings.HasPrefix(a.name, fmt.Sprintf("%09d.", i)) || a.format == "" || int64(len(a.data)) != a.size {
			t.Errorf("raw sample %d: %s, sample %d, format %q, %d bytes of %d", i, a.name, a.sample, a.format, len(a.data), a.size)
		}
		if a.name != b.name || a.size != b.size || !bytes.Equal(a.data, b.data) {
			t.Errorf("sample %d: raw %s (%d bytes), LZ4 %s (%d bytes)", i, a.name, a.size, b.name, b.size)
		}
	}
}
