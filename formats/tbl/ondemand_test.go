package tbl

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestIndexOnDemand: a reader keeps no table a sample for a writer's file:
// entries come from windows read again as they are needed, metadata from
// groups (a group too large to read at once is walked). Every sample and
// block reads back, in order and out of it, and a file cut after Open is
// an error, not a panic.
func TestIndexOnDemand(t *testing.T) {
	const n = windowLen*indexWindows + 3*metaGroupLen + 5
	big := bytes.Repeat([]byte("m"), metaGroupMax+10)
	path := filepath.Join(t.TempDir(), "big.tbl")
	w, err := Create(path, WriterOptions{Version: 2, NumSamples: n})
	if err != nil {
		t.Fatal(err)
	}
	meta := func(i int) []MetaEntry {
		switch {
		case i%7 == 3:
			return nil
		case i == 2*metaGroupLen+1:
			return []MetaEntry{NameMeta("big"), {Type: MetaCustom, Data: big}}
		}
		return []MetaEntry{NameMeta(fmt.Sprintf("s%d.jpg", i))}
	}
	for i := range n {
		d := fmt.Sprint(i)
		if err := w.Add(JPEG, strings.NewReader(d), int64(len(d)), meta(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if r.index != nil || r.metaGroup == nil || r.meta != nil {
		t.Fatalf("tables kept: index %d bytes, groups %v, refs %d", len(r.index), r.metaGroup != nil, len(r.meta))
	}
	check := func(i int) {
		b, err := r.ReadSample(i, nil)
		if err != nil || string(b) != fmt.Sprint(i) || r.Sample(i).Index != i {
			t.Fatalf("sample %d: %q %v", i, b, err)
		}
		m, err := r.Metadata(i)
		want := meta(i)
		if err != nil || len(m) != len(want) {
			t.Fatalf("sample %d: %d blocks, %v; want %d", i, len(m), err, len(want))
		}
		for k := range m {
			if m[k].Type != want[k].Type || !bytes.Equal(m[k].Data, want[k].Data) {
				t.Fatalf("sample %d block %d differs", i, k)
			}
		}
	}
	for i := range n {
		check(i)
	}
	for i := n - 1; i >= 0; i -= 4099 { // backwards, across windows
		check(i)
	}
	if err := r.Verify(); err != nil {
		t.Fatal(err)
	}
	// Cut inside the index: entries not read lately fail to read.
	fi, _ := os.Stat(path)
	if err := os.Truncate(path, HeaderSizeV2+EntrySizeV2*10); err != nil {
		t.Fatal(err)
	}
	defer os.Truncate(path, fi.Size())
	r2, err := Open(path)
	if err == nil {
		r2.Close()
		t.Fatal("a cut file opened")
	}
	if _, err := r.ReadSample(n/2, nil); !errors.Is(err, ErrTruncated) {
		t.Errorf("reading a cut file: %v", err)
	}
	if s := r.Sample(0); s.Offset != -1 { // its window was evicted by the last one (Verify)
		t.Errorf("an entry of a cut file: %+v", s)
	}
}
