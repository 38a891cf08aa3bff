package tbl

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// FuzzPartInfo checks the reader of part records: it never panics, and a
// record it accepts passes its own checks and reads back the same once
// written again. Its seeds are the records of real parts (one ending on a
// metadata member, one opening with its sample, one without rows) and
// damaged ones.
func FuzzPartInfo(f *testing.F) {
	d := fuzzPartDataset(f)
	parts, _ := writeParts(f, d, []int{0, 1, 2, 2}, RowsOptions{}, f.TempDir())
	for _, p := range parts {
		data, err := os.ReadFile(filepath.Join(p, partInfoName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(bytes.Replace(data, []byte(`"samples": `), []byte(`"samples": -`), 1))
	}
	// Parts written in place, across the same member.
	dir := f.TempDir()
	for k, b := range [][2]int{{0, 1}, {1, 2}, {2, 2}} {
		p := filepath.Join(dir, fmt.Sprint(k))
		if err := os.Mkdir(p, 0o755); err != nil {
			f.Fatal(err)
		}
		if _, err := WriteRange(context.Background(), d.whole, b[0], b[1], p, dir, RowsOptions{}); err != nil {
			f.Fatal(err)
		}
		data, err := os.ReadFile(filepath.Join(p, partInfoName))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(bytes.Replace(data, []byte(`"first_sample": `), []byte(`"first_sample": 9`), 1))
	}
	f.Add([]byte(`{"format":"itarconv-tbl-part","part_version":1,"tbl_version":1,"lz4":true}`))
	f.Add([]byte(`{"format":"itarconv-tbl-part","part_version":1,"tbl_version":2,"samples":1,"file_size":88,"first_row":{"name":"eA==","sample":true},"trailing_member":{"name":"eC50YmxtZXRhLmpzb24=","blocks":1,"size":15}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		info, err := decodePartInfo(data)
		if err != nil {
			return
		}
		if err := info.check(); err != nil {
			t.Fatalf("accepted a record its checks refuse: %v", err)
		}
		again, err := json.Marshal(info)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodePartInfo(again)
		if err != nil {
			t.Fatalf("a record written again is refused: %v\n%s", err, again)
		}
		if !reflect.DeepEqual(back, info) {
			t.Fatalf("read back %+v, want %+v", back, info)
		}
	})
}

// FuzzTrailingBlocks checks the reader of trailing.meta: it never panics,
// and the blocks it accepts lay out as the bytes it read.
func FuzzTrailingBlocks(f *testing.F) {
	f.Add(appendBlocks(nil, 0, []MetaEntry{{Type: MetaJSON, Data: []byte(`{"a":1}`)}, {Type: MetaCustom}}), int64(2))
	f.Add(appendBlocks(nil, 3, []MetaEntry{{Type: MetaJSON, Data: []byte(`{}`)}}), int64(1))
	f.Add([]byte{}, int64(0))
	f.Add(make([]byte, MetaBlockLen-1), int64(1))
	f.Fuzz(func(t *testing.T, data []byte, want int64) {
		blocks, err := parseBlocks(data, want)
		if err != nil {
			return
		}
		if int64(len(blocks)) != want || !bytes.Equal(appendBlocks(nil, 0, blocks), data) {
			t.Fatalf("%d blocks %v from %x", len(blocks), blocks, data)
		}
	})
}

// fuzzPartDataset is a small v2 TBL of two shards, the first ending on a
// metadata member whose sample opens the second.
func fuzzPartDataset(tb testing.TB) *partDataset {
	ss := make([]srcSample, 300)
	for i := range ss {
		ss[i] = srcSample{name: "f" + string(rune('a'+i%26)) + ".bin", data: testPayload(uint64(i), i%40)}
	}
	ss[255] = memberSample("m.jpg", MetaEntry{Type: MetaJSON, Data: []byte(`{"name":"m.jpg","k":1}`)})
	ss[256] = srcSample{name: "m.jpg", data: []byte("m")}
	path := filepath.Join(tb.TempDir(), "fuzz.tbl")
	writeSourceTBL(tb, path, 2, ss)
	return tblDatasetOf(tb, "fuzz", path, nil)
}

// FuzzPartMeta checks the reader of a part's part.meta (written in
// place, its blocks numbered as in the whole file): it never panics,
// and blocks it accepts are counted as the bytes it read, but for the
// first sample's, which it leaves out for the ones a member gives.
func FuzzPartMeta(f *testing.F) {
	var seed []byte
	seed = appendMetaBlock(seed, 5, MetaEntry{Type: MetaJSON, Data: []byte(`{"name":"a"}`)})
	seed = appendMetaBlock(seed, 6, MetaEntry{Type: MetaCustom, Data: []byte{1, 2}})
	seed = appendMetaBlock(seed, 6, MetaEntry{Type: MetaJSON})
	f.Add(seed, int64(5), int64(3), false)
	f.Add(seed, int64(5), int64(3), true)
	f.Add(seed[:20], int64(5), int64(1), false)
	f.Add(seed, int64(6), int64(1), false)
	f.Fuzz(func(t *testing.T, data []byte, first, samples int64, head bool) {
		if first < 0 || samples < 0 || first > 1<<40 || samples > 1<<40 {
			return
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, partMetaName), data, 0o644); err != nil {
			t.Fatal(err)
		}
		p := &mergePart{dir: dir, info: &partInfo{Samples: samples, InPlace: &inPlace{First: first, MetaSize: int64(len(data))}}}
		var given int64
		if head {
			p.head, p.headSet = []MetaEntry{{Type: MetaJSON, Data: []byte(`{"k":1}`)}}, true
			given = MetaBlockLen + 7
		}
		m := &merger{out: filepath.Join(dir, "out.tbl")}
		var sz sizeWriter
		if err := m.walkPartMeta(context.Background(), p, &sz, false); err != nil {
			return
		}
		if int64(sz) > given+int64(len(data)) || !head && int64(sz) != int64(len(data)) {
			t.Fatalf("%d bytes counted from %d bytes of blocks (head %v)", sz, len(data), head)
		}
	})
}
