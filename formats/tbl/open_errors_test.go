package tbl

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateOpenGolden = flag.Bool("update-open", false, "rewrite testdata/open_errors.golden")

// TestOpenErrors pins every refusal of newReader and checkIndex, message
// and offset included: each byte of the header and index of a v1 file and
// of a compressed v2 file with metadata is changed (a v2 header's CRC-32
// made right again, so that its fields are reached), each header prefix
// is tried, and the messages must be those in
// testdata/open_errors.golden.
func TestOpenErrors(t *testing.T) {
	var lines []string
	for _, v := range []int{1, 2} {
		path := filepath.Join(t.TempDir(), "f.tbl")
		w, err := Create(path, WriterOptions{Version: v, NumSamples: 3, LZ4: v == 2})
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range []string{strings.Repeat("a", 300), "bb", ""} {
			var meta []MetaEntry
			if v == 2 && i != 1 {
				meta = []MetaEntry{NameMeta(fmt.Sprint(i, ".jpg"))}
			}
			if err := w.Add(JPEG, strings.NewReader(s), int64(len(s)), meta); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		good, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		try := func(what string, b []byte) {
			msg := "ok"
			if r, err := newReader("f.tbl", bytes.NewReader(b), int64(len(b))); err != nil {
				msg = err.Error()
			} else {
				r.Close()
			}
			lines = append(lines, fmt.Sprintf("v%d %s: %s", v, what, msg))
		}
		hl := headerLen(v)
		end := hl + 3*entryLen(v)
		for i := range end {
			for _, x := range []byte{0xff, 0x01, 0x80} {
				b := bytes.Clone(good)
				b[i] ^= x
				if v == 2 && i != 44 && i != 45 && i != 46 && i != 47 {
					binary.LittleEndian.PutUint32(b[44:], headerCRC(b[:HeaderSizeV2]))
				}
				try(fmt.Sprintf("byte %d^%#x", i, x), b)
			}
		}
		for n := range hl + 1 {
			try(fmt.Sprintf("prefix %d", n), good[:n])
		}
		try("index cut", good[:end-1])
	}
	got := strings.Join(lines, "\n") + "\n"
	golden := filepath.Join("testdata", "open_errors.golden")
	if *updateOpenGolden {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range min(len(gl), len(wl)) {
			if gl[i] != wl[i] {
				t.Fatalf("line %d:\n got %s\nwant %s", i+1, gl[i], wl[i])
			}
		}
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
}
