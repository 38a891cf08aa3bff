package mds_test

import (
	"bytes"
	"errors"
	"io/fs"
	"testing"

	"github.com/itarconv/itarconv/formats/mds"
)

// TestReadEntry: every member read by its name is the member the rows
// give (the last of a name that comes twice), in datasets named by
// __key__ and by number, plain and compressed; a name of no member, or
// of the key's column, is fs.ErrNotExist.
func TestReadEntry(t *testing.T) {
	for _, dir := range []string{"testdata/mosaic/encodings", "testdata/mosaic/compressed_zstd", "testdata/mosaic/compressed_gz", "testdata/mosaic/keyed"} {
		rows, err := readRows(t, dir)
		if err != nil {
			t.Fatal(err)
		}
		d, err := mds.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		last := map[string][]byte{}
		for _, m := range rows {
			last[m.name] = m.data
		}
		// Backwards, so that a sample is not found as the one after the
		// one read before.
		for i := len(rows) - 1; i >= 0; i-- {
			b, err := d.ReadEntry(rows[i].name)
			if err != nil || !bytes.Equal(b, last[rows[i].name]) {
				t.Errorf("%s: %s: %d bytes, %v", dir, rows[i].name, len(b), err)
			}
		}
		for _, name := range []string{"nope.txt", "00000000", "00000099.str", "dir/sample0000.__key__", "00000000.__key__"} {
			if _, err := d.ReadEntry(name); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s: %s: %v, want fs.ErrNotExist", dir, name, err)
			}
		}
	}
}
