package loaders_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/testing/testutil"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/loaders"
	daliloader "github.com/itarconv/itarconv/loaders/dali"
	energonloader "github.com/itarconv/itarconv/loaders/energon"
	ratarmountloader "github.com/itarconv/itarconv/loaders/ratarmount"
	widsloader "github.com/itarconv/itarconv/loaders/wids"
	"github.com/itarconv/itarconv/partition"
)

// outputs reads every file under dir but the shards, by name, and removes
// them.
func takeOutputs(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".tar") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel] = b
		return os.Remove(p)
	})
	return files
}

func allLoaders() *loaders.Set {
	return loaders.NewSet(energonloader.New(""), widsloader.New("", true), daliloader.New(""), ratarmountloader.New(""))
}

// TestIndexPartsEqualOneRun: the parts of 1, 2, 3 and 7 tasks, merged,
// give every file one run gives (TARIDX, its manifest, each loader's
// index), byte for byte, and the same figures (the loaders' counts too);
// so does a refusal.
func TestIndexPartsEqualOneRun(t *testing.T) {
	ctx := context.Background()
	for _, cc := range []struct {
		c          string
		contiguous bool
	}{{"webdataset", false}, {"pax_py", false}, {"dirs_links_gnutar", false}, {"noncontiguous", false}, {"noncontiguous", true},
		{"empty_shard_middle", false}, {"duplicates", false}} {
		c, contiguous := cc.c, cc.contiguous
		{
			t.Run(fmt.Sprintf("%s/contiguous=%v", c, contiguous), func(t *testing.T) {
				dir, shards := testutil.CopyShards(t, filepath.Join("..", "formats", "energon", "testdata", c))
				out := filepath.Join(dir, "out.taridx")
				l := allLoaders()
				want, err := fold.BuildIndex(ctx, shards, out, fold.IndexOptions{Workers: 2, Contiguous: contiguous, Loaders: l})
				if err != nil {
					t.Fatal(err)
				}
				wantSt, wantErr := l.Finish(context.Background())
				wantFiles := takeOutputs(t, dir)
				if len(wantFiles) < 2*len(shards)+3 {
					t.Fatalf("one run wrote only %d files", len(wantFiles))
				}
				for _, n := range []int{1, 3, 7} {
					var parts []string
					for k := range n {
						lo, hi := partition.Range(sizesOf(t, shards), partition.Task{K: k, N: n})
						part := t.TempDir()
						if _, err := fold.IndexPart(ctx, shards, lo, hi, true, part, fold.IndexOptions{Workers: 1 + k%2, Contiguous: contiguous, Loaders: allLoaders()}); err != nil {
							t.Fatal(err)
						}
						parts = append(parts, part)
					}
					l := allLoaders()
					got, err := fold.MergeIndexParts(ctx, shards, parts, out, fold.IndexOptions{Contiguous: contiguous, Loaders: l})
					if err != nil {
						t.Fatal(err)
					}
					gotSt, gotErr := l.Finish(context.Background())
					if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
						t.Errorf("%d tasks: the loaders' error %v, one run's %v", n, gotErr, wantErr)
					}
					if fmt.Sprint(gotSt) != fmt.Sprint(wantSt) {
						t.Errorf("%d tasks: the loaders' counts %v, one run's %v", n, gotSt, wantSt)
					}
					gotFiles := takeOutputs(t, dir)
					for name, b := range wantFiles {
						if !bytes.Equal(gotFiles[name], b) {
							t.Errorf("%d tasks: %s differs from one run's (%d bytes, want %d)", n, name, len(gotFiles[name]), len(b))
						}
					}
					if len(gotFiles) != len(wantFiles) {
						t.Errorf("%d tasks: %d files, one run %d", n, len(gotFiles), len(wantFiles))
					}
					got.Elapsed, got.MembersPerSec, got.Reads, got.ReadBytes = 0, 0, 0, 0
					w := *want
					w.Elapsed, w.MembersPerSec, w.Reads, w.ReadBytes = 0, 0, 0, 0
					if fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", w) {
						t.Errorf("%d tasks: figures\n%+v\none run's\n%+v", n, *got, w)
					}
				}
			})
		}
	}
}

func sizesOf(t *testing.T, paths []string) []int64 {
	sizes := make([]int64, len(paths))
	for i, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		sizes[i] = fi.Size()
	}
	return sizes
}

// FuzzLoadPart: the file of the loaders' states a task leaves in its part,
// damaged any way, is refused as a damaged part (fold.ErrPart) or
// restored; nothing panics. Seeds: the file of a task over the
// webdataset case, whole and cut short.
func FuzzLoadPart(f *testing.F) {
	_, shards := testutil.CopyShards(f, filepath.Join("..", "formats", "energon", "testdata", "webdataset"))
	part := f.TempDir()
	if _, err := fold.IndexPart(context.Background(), shards, 0, len(shards), true, part, fold.IndexOptions{Workers: 1, Loaders: allLoaders()}); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(part, "loaders.gob"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add(b[:len(b)/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "loaders.gob")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := allLoaders().LoadPart(p); err != nil && !errors.Is(err, fold.ErrPart) {
			t.Fatalf("%v: not fold.ErrPart", err)
		}
	})
}
