package mds

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// seedIndexes are the index.json files of testdata: MosaicML's and ours.
func seedIndexes(f *testing.F) [][]byte {
	paths, _ := filepath.Glob("testdata/mosaic/*/index.json")
	var seeds [][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, b)
	}
	if len(seeds) == 0 {
		f.Fatal("no seeds")
	}
	return seeds
}

// FuzzIndex: any index.json parses or is refused with an error, never a
// panic; what parses writes back as an index that parses the same.
func FuzzIndex(f *testing.F) {
	for _, s := range seedIndexes(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := parseIndex("index.json", b)
		if err != nil {
			return
		}
		out := appendIndexHead(nil)
		for i := range ix.Shards {
			if i > 0 {
				out = append(out, ", "...)
			}
			out = ix.Shards[i].appendShard(out)
		}
		out = appendIndexTail(out)
		again, err := parseIndex("index.json", out)
		if err != nil {
			t.Fatalf("written back: %v\n%s", err, out)
		}
		if len(again.Shards) != len(ix.Shards) {
			t.Fatalf("%d shards written back as %d", len(ix.Shards), len(again.Shards))
		}
	})
}

// FuzzShard: any bytes as a shard (plain, or its zstd file) of an index
// from testdata are read, listed and verified or refused with an error,
// never a panic or a hang; every column of every sample decodes inside
// the bytes read.
func FuzzShard(f *testing.F) {
	for _, d := range []string{"testdata/mosaic/encodings", "testdata/mosaic/keyed", "testdata/mosaic/compressed_zstd"} {
		ix, err := readIndex(d)
		if err != nil {
			f.Fatal(err)
		}
		s := ix.Shards[0]
		name := s.RawData.Basename
		if s.ZipData != nil {
			name = s.ZipData.Basename
		}
		b, err := os.ReadFile(filepath.Join(d, name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(d, b)
	}
	f.Fuzz(func(t *testing.T, d string, b []byte) {
		switch d {
		case "testdata/mosaic/encodings", "testdata/mosaic/keyed", "testdata/mosaic/compressed_zstd":
		default:
			return
		}
		ix, err := readIndex(d)
		if err != nil {
			t.Fatal(err)
		}
		s := ix.Shards[0]
		// The index records the fuzzed file's size, so that the bytes
		// past the header are what is read.
		f := s.RawData
		if s.ZipData != nil {
			f = s.ZipData
		}
		f.Bytes = int64(len(b))
		f.Hashes = nil
		if s.ZipData != nil {
			s.RawData.Hashes = nil
		}
		ix.Shards = []ShardInfo{s}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, f.Basename), b, 0o644); err != nil {
			t.Fatal(err)
		}
		out := appendIndexTail(s.appendShard(appendIndexHead(nil)))
		if err := os.WriteFile(filepath.Join(dir, IndexFile), out, 0o644); err != nil {
			t.Fatal(err)
		}
		ds, err := Open(dir)
		if err != nil {
			return
		}
		_ = ds.scanShard(context.Background(), 0, false, func(bt *batch) error {
			for _, v := range bt.vals {
				if v[0] > v[1] || int(v[1]) > len(bt.data) {
					t.Fatalf("a value at %v of %d bytes", v, len(bt.data))
				}
			}
			return ds.members(0, bt, func(*member) error { return nil })
		})
		Verify(context.Background(), dir)
	})
}
