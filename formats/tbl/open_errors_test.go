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

// TestFineV2Sufficient: every v2 entry the inline check vouches for passes
// checkEntry, over every flag byte, sizes at LZ4's bound, and the file's
// flags: the fast path passes nothing checkEntry would refuse (what it
// does not vouch for, checkEntry still decides).
func TestFineV2Sufficient(t *testing.T) {
	r := &Reader{path: "f.tbl", hasMeta: make([]uint64, 1)}
	e := make([]byte, entryLen(2))
	vouched := 0
	for _, compressedOK := range []bool{false, true} {
		for _, metaOK := range []bool{false, true} {
			lim := entryLimits{dataStart: 64, dataEnd: 1 << 40, compressedOK: compressedOK, metaOK: metaOK}
			for flags := range 256 {
				for _, sz := range [][2]uint32{{0, 0}, {1, 0}, {0, 1}, {5, 5}, {5, 6}, {10, 255*10 + 255}, {10, 255*10 + 256}} {
					stored, usize := sz[0], sz[1]
					binary.LittleEndian.PutUint32(e[8:], stored)
					binary.LittleEndian.PutUint32(e[12:], usize)
					e[21] = byte(flags)
					fine := lim.fineV2(byte(flags), stored, usize)
					err := r.checkEntry(lim, false, 0, 64, e, 64, stored)
					if fine && err != nil {
						t.Errorf("flags %#x, sizes %d/%d, file %v/%v: vouched for, yet %v", flags, stored, usize, compressedOK, metaOK, err)
					}
					if fine {
						vouched++
					}
				}
			}
		}
	}
	if vouched < 16 {
		t.Errorf("only %d entries vouched for", vouched)
	}
}
