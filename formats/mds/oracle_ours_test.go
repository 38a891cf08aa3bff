package mds_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/itarconv/itarconv/formats/formattest"
	"github.com/itarconv/itarconv/formats/mds"
	"github.com/itarconv/itarconv/formats/registry"
)

// oursInput is the dataset whose MDS, as this package writes it,
// MosaicML's reader read (testdata/oracle/read_ours.py): WebDataset-style
// members of several extensions, keys in directories and past ASCII, a
// sample with a column more (a new shard), and values that make a
// column fall back to a plainer encoding in one shard (an integer
// written "07", text that is not UTF-8, JSON that does not parse).
func oursInput(t testing.TB) []formattest.Shard {
	jpg, err := os.ReadFile("testdata/oracle/in.jpg")
	if err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile("testdata/oracle/in.png")
	if err != nil {
		t.Fatal(err)
	}
	var shards []formattest.Shard
	for s := 0; s < 2; s++ {
		var sh formattest.Shard
		for i := 0; i < 12; i++ {
			n := s*12 + i
			key := fmt.Sprintf("part%d/sample-%03d", s, n)
			if n == 5 {
				key = "part0/échantillon-005"
			}
			cls := fmt.Sprint(n % 10)
			if n == 15 {
				cls = "07"
			}
			txt := []byte(fmt.Sprintf("caption %d", n))
			if n == 20 {
				txt = []byte{0xff, 0xfe, 'x'}
			}
			js := fmt.Sprintf(`{"n": %d, "tags": ["a", "b"]}`, n)
			if n == 9 {
				js = `{"n": NaN-ish`
			}
			bin := bytes.Repeat([]byte{byte(n)}, n*37)
			sh = append(sh, formattest.File{Name: key + ".bin", Data: bin}, formattest.File{Name: key + ".cls", Data: []byte(cls)},
				formattest.File{Name: key + ".jpg", Data: jpg}, formattest.File{Name: key + ".json", Data: []byte(js)})
			if n >= 18 {
				sh = append(sh, formattest.File{Name: key + ".png", Data: png})
			}
			sh = append(sh, formattest.File{Name: key + ".txt", Data: txt})
		}
		shards = append(shards, sh)
	}
	return shards
}

// largeInput is a dataset of shards past the samples a shard holds in
// memory (4 MiB): their header is written into room kept for it.
func largeInput() []formattest.Shard {
	var sh formattest.Shard
	for n := 0; n < 300; n++ {
		key := fmt.Sprintf("big/%05d", n)
		sh = append(sh, formattest.File{Name: key + ".bin", Data: bytes.Repeat([]byte{byte(n)}, 30720)},
			formattest.File{Name: key + ".cls", Data: []byte(fmt.Sprint(n))})
	}
	return []formattest.Shard{sh}
}

// oursVariants are the ways the oracle's datasets are written.
type oursVariant struct {
	name      string
	opts      mds.Options
	shardSize int64
	large     bool
}

var oursVariants = []oursVariant{
	{"plain", mds.Options{}, 8 << 10, false},
	{"zstd", mds.Options{Compression: "zstd", Hashes: []string{"sha1", "xxh64"}}, 8 << 10, false},
	{"gz", mds.Options{Compression: "gz:6", Hashes: []string{"md5", "sha256"}}, 8 << 10, false},
	{"snappy", mds.Options{Compression: "snappy"}, 8 << 10, false},
	{"large", mds.Options{}, 6 << 20, true},
	{"large_zstd", mds.Options{Compression: "zstd"}, 6 << 20, true},
}

func (v oursVariant) input(t testing.TB) []formattest.Shard {
	if v.large {
		return largeInput()
	}
	return oursInput(t)
}

// writeOurs writes every variant of the oracle's dataset into dir, and
// the members each holds (name, sha256) beside it.
func writeOurs(t *testing.T, dir string) {
	for _, v := range oursVariants {
		in := v.input(t)
		out := filepath.Join(dir, v.name)
		if _, err := mds.Write(context.Background(), &formattest.Rows{Shards: in}, out,
			registry.CreateOptions{Workers: 2, ShardSize: v.shardSize, Format: v.opts}); err != nil {
			t.Fatal(err)
		}
		var members [][2]string
		for _, f := range formattest.Files(in) {
			sum := sha256.Sum256(f.Data)
			members = append(members, [2]string{f.Name, hex.EncodeToString(sum[:])})
		}
		b, _ := json.Marshal(map[string]any{"members": members})
		if err := os.WriteFile(out+".members.json", b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// oracleRead is what read_ours.py recorded of each dataset: the digests
// of the files it read, and how many samples and members it checked.
type oracleRead struct {
	Reader   string `json:"reader"`
	Datasets map[string]struct {
		Files   map[string]string `json:"files"`
		Samples int               `json:"samples"`
		Members int               `json:"members"`
	} `json:"datasets"`
}

// TestOursReadByMosaic: the files this package writes are still those
// MosaicML's MDSReader read, sample for sample, with the members written
// (testdata/oracle/ours.json, from read_ours.py). MDS_ORACLE_OUT=dir
// writes them into dir for the script instead.
func TestOursReadByMosaic(t *testing.T) {
	if dir := os.Getenv("MDS_ORACLE_OUT"); dir != "" {
		writeOurs(t, dir)
		return
	}
	b, err := os.ReadFile("testdata/oracle/ours.json")
	if err != nil {
		t.Fatal(err)
	}
	var read oracleRead
	if err := json.Unmarshal(b, &read); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeOurs(t, dir)
	for _, v := range oursVariants {
		rec, ok := read.Datasets[v.name]
		if !ok || rec.Members != len(formattest.Files(v.input(t))) {
			t.Fatalf("%s: the oracle read %d members", v.name, rec.Members)
		}
		files, _ := filepath.Glob(filepath.Join(dir, v.name, "*"))
		if len(files) != len(rec.Files) {
			t.Errorf("%s: %d files, the oracle read %d", v.name, len(files), len(rec.Files))
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			if want := rec.Files[filepath.Base(f)]; hex.EncodeToString(sum[:]) != want {
				t.Errorf("%s/%s: not the bytes the oracle read", v.name, filepath.Base(f))
			}
		}
	}
}

// TestSameBytesAsMosaic: the members of a dataset MosaicML's writer
// wrote (a key, then columns in its sorted order), written back with no
// hashes as it wrote them, give the same files, byte for byte.
func TestSameBytesAsMosaic(t *testing.T) {
	src := "testdata/mosaic/keyed"
	in := formattest.ReadSample(t, "mds", src)
	out := filepath.Join(t.TempDir(), "keyed")
	if _, err := mds.Write(context.Background(), &formattest.Rows{Shards: in}, out,
		registry.CreateOptions{Workers: 2, Format: mds.Options{Hashes: []string{}}}); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(src, "*"))
	for _, f := range files {
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(out, filepath.Base(f)))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, MosaicML's %d, not the same (%v)", filepath.Base(f), len(got), len(want), err)
		}
	}
}
