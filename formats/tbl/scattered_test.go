package tbl

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestScatteredMetadata: a file whose metadata blocks of one sample lie
// apart (no writer makes one, the format allows it) reads every sample's
// blocks in file order, as one whose blocks lie together does.
func TestScatteredMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.tbl")
	w, err := Create(path, WriterOptions{Version: 2, NumSamples: 2})
	if err != nil {
		t.Fatal(err)
	}
	a, b, c := MetaEntry{Type: MetaJSON, Data: []byte(`{"a":1}`)}, MetaEntry{Type: MetaMsgpack, Data: []byte("bb")}, MetaEntry{Type: MetaCustom, Data: []byte("c")}
	w.Add(JPEG, strings.NewReader("x"), 1, []MetaEntry{a, b})
	w.Add(PNG, strings.NewReader("y"), 1, []MetaEntry{c})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for _, scattered := range []bool{false, true} {
		data, _ := os.ReadFile(path)
		le := binary.LittleEndian
		if scattered {
			// Blocks: [0: a][0: b][1: c] -> [0: a][1: b][0: c].
			pos := int(le.Uint64(data[24:]))
			pos += MetaBlockLen + len(a.Data)
			le.PutUint64(data[pos:], 1)
			pos += MetaBlockLen + len(b.Data)
			le.PutUint64(data[pos:], 0)
		}
		p := filepath.Join(t.TempDir(), "x.tbl")
		os.WriteFile(p, data, 0o644)
		r, err := Open(p)
		if err != nil {
			t.Fatalf("scattered %v: %v", scattered, err)
		}
		want := [][]MetaEntry{{a, b}, {c}}
		if scattered {
			want = [][]MetaEntry{{a, c}, {b}}
		}
		if (r.metaGroup == nil) != scattered {
			t.Errorf("scattered %v: table of groups %v", scattered, r.metaGroup != nil)
		}
		for i := range 2 {
			m, err := r.Metadata(i)
			if err != nil || !reflect.DeepEqual(m, want[i]) {
				t.Errorf("scattered %v: sample %d: %v %v, want %v", scattered, i, m, err, want[i])
			}
		}
		r.Close()
		if _, err := r.Metadata(0); err == nil {
			t.Error("Metadata after Close succeeded")
		}
	}
}
