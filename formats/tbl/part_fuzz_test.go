package tbl

import (
	"bytes"
	"encoding/json"
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
