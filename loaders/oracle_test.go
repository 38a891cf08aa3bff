package loaders_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/energon"
	"github.com/itarconv/itarconv/formats/ratarmount"
	"github.com/itarconv/itarconv/loaders"
	energonloader "github.com/itarconv/itarconv/loaders/energon"
	ratarmountloader "github.com/itarconv/itarconv/loaders/ratarmount"
	widsloader "github.com/itarconv/itarconv/loaders/wids"
)

// indexLoaders writes the loaders' indexes of shards, as the index command
// does: a pass, then Finish.
func indexLoaders(t *testing.T, shards []string, kinds ...loaders.Loader) (*loaders.Stats, error) {
	t.Helper()
	l := loaders.NewSet(kinds...)
	if _, err := fold.BuildIndex(context.Background(), shards, "", fold.IndexOptions{Workers: 2, Loaders: l}); err != nil {
		t.Fatal(err)
	}
	return l.Finish(context.Background())
}

// TestWidsOracle: from one pass, the wids index is the one widsindex
// create wrote over the same shards, byte for byte (MD5 sums included).
func TestWidsOracle(t *testing.T) {
	for _, c := range []string{"webdataset", "pax_py", "gnu_longname_py", "ustar_prefix", "duplicates", "dirs_links_gnutar", "multidot_names"} {
		t.Run(c, func(t *testing.T) {
			src := filepath.Join("..", "formats", "wids", "testdata", c)
			dir, shards := testutil.CopyShards(t, src)
			st, err := indexLoaders(t, shards, widsloader.New("", true))
			if err != nil {
				t.Fatal(err)
			}
			if st.Written["wids"] != 1 {
				t.Errorf("written %v", st.Written)
			}
			want, _ := os.ReadFile(filepath.Join(src, "shardindex.json"))
			got, _ := os.ReadFile(filepath.Join(dir, "shardindex.json"))
			if !bytes.Equal(got, want) {
				t.Errorf("got\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// TestWidsRefuses: a shard wids cannot read leaves no index, and says
// which (the tool writes none either).
func TestWidsRefuses(t *testing.T) {
	dir, shards := testutil.CopyShards(t, filepath.Join("..", "formats", "wids", "testdata", "nonutf8_name"))
	_, err := indexLoaders(t, shards, widsloader.New("", false))
	if !errors.Is(err, loaders.ErrDataset) || !strings.Contains(err.Error(), filepath.Base(shards[0])) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "shardindex.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("an index was written: %v", err)
	}
}

// TestRatarmountOracle: from one pass, each shard's ratarmount index has
// the rows ratarmount's own index of it has (metadata aside: tarstats is
// the machine's).
func TestRatarmountOracle(t *testing.T) {
	for _, c := range []string{"pax_py", "dirs_links_gnutar", "paxglobal", "sparse_gnutar", "duplicates"} {
		t.Run(c, func(t *testing.T) {
			src := filepath.Join("..", "formats", "ratarmount", "testdata", c)
			_, shards := testutil.CopyShards(t, src)
			st, err := indexLoaders(t, shards, ratarmountloader.New(""))
			if err != nil {
				t.Fatal(err)
			}
			if st.Written["ratarmount"] != len(shards) {
				t.Errorf("written %v, not indexed %v", st.Written, st.None)
			}
			for _, shard := range shards {
				got, err := ratarmount.Read(ratarmount.IndexPath(shard))
				if err != nil {
					t.Fatal(err)
				}
				want, err := ratarmount.Read(ratarmount.IndexPath(filepath.Join(src, filepath.Base(shard))))
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got.Files, want.Files) || !reflect.DeepEqual(got.XAttrs, want.XAttrs) {
					t.Errorf("%s: files\n%+v\nwant\n%+v", shard, got.Files, want.Files)
				}
			}
		})
	}
}

// TestEnergonOracle: from one pass, every shard's .tar.idx and the
// dataset's .nv-meta are energon prepare's: the .tar.idx, .info.json and
// split.yaml byte for byte, index.sqlite sample for sample.
func TestEnergonOracle(t *testing.T) {
	for _, c := range []string{"webdataset", "pax_py", "gnu_longname_py", "dirs_links_gnutar", "multidot_names"} {
		t.Run(c, func(t *testing.T) {
			src := filepath.Join("..", "formats", "energon", "testdata", c)
			dir, shards := testutil.CopyShards(t, src)
			st, err := indexLoaders(t, shards, energonloader.New(""))
			if err != nil {
				t.Fatal(err)
			}
			if st.Written["energon"] != len(shards)+4 {
				t.Errorf("written %v", st.Written)
			}
			for _, shard := range shards {
				got, _ := os.ReadFile(energon.IdxPath(shard))
				want, _ := os.ReadFile(energon.IdxPath(filepath.Join(src, filepath.Base(shard))))
				if !bytes.Equal(got, want) {
					t.Errorf("%s: .tar.idx differs", shard)
				}
			}
			for _, f := range []string{energon.InfoJSONFile, energon.SplitYAMLFile} {
				got, _ := os.ReadFile(filepath.Join(dir, energon.MetaDir, f))
				want, _ := os.ReadFile(filepath.Join(src, energon.MetaDir, f))
				if !bytes.Equal(got, want) {
					t.Errorf("%s:\n%s\nwant\n%s", f, got, want)
				}
			}
			got, err := energon.ReadMeta(dir)
			if err != nil {
				t.Fatal(err)
			}
			want, err := energon.ReadMeta(src)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got.Shards, want.Shards) {
				t.Errorf("index.sqlite: got %+v\nwant %+v", got.Shards, want.Shards)
			}
		})
	}
}

// TestEnergonRefuses: a key in two shards leaves no .nv-meta, naming it.
func TestEnergonRefuses(t *testing.T) {
	dir, shards := testutil.CopyShards(t, filepath.Join("..", "formats", "energon", "testdata", "duplicates"))
	_, err := indexLoaders(t, shards, energonloader.New(""))
	if !errors.Is(err, loaders.ErrDataset) || !errors.Is(err, energon.ErrDuplicateKey) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, energon.MetaDir, energon.IndexFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("index.sqlite was written: %v", err)
	}
}
