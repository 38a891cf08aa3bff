package bench

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
)

// stamp records what a dataset directory was generated from, so that a
// kept directory is reused only when it holds exactly these shards.
type stamp struct {
	Dataset Dataset
	Sizes   []int64
}

// Prepare makes sure dir holds the shards of d, and nothing else: it
// reuses them when the stamp file (stampName, in dir) of an earlier run
// matches, and generates them otherwise. reused tells which. (A function,
// not a method: Dataset is shardgen's type, and reusing a kept directory is
// a need of the development benchmarks only.)
func Prepare(d Dataset, dir, stampName string) (paths []string, reused bool, err error) {
	want := stamp{Dataset: d}
	if b, err := os.ReadFile(filepath.Join(dir, stampName)); err == nil {
		var got stamp
		if json.Unmarshal(b, &got) == nil && got.Dataset == d && len(got.Sizes) == d.Shards {
			ok := true
			for i := range d.Shards {
				st, err := os.Stat(d.ShardPath(dir, i))
				ok = ok && err == nil && st.Size() == got.Sizes[i]
				paths = append(paths, d.ShardPath(dir, i))
			}
			if ok {
				return paths, true, nil
			}
		}
	}
	// Stale shards of another size would join the fold: start afresh.
	if err := os.RemoveAll(dir); err != nil {
		return nil, false, err
	}
	paths, err = d.Generate(context.Background(), dir)
	if err != nil {
		return nil, false, err
	}
	for _, p := range paths {
		st, err := os.Stat(p)
		if err != nil {
			return nil, false, err
		}
		want.Sizes = append(want.Sizes, st.Size())
	}
	b, _ := json.Marshal(want)
	return paths, false, os.WriteFile(filepath.Join(dir, stampName), b, 0o644)
}

// Warm reads every file once, in large reads (io.Copy to io.Discard would
// use 8 KiB ones), so that all of them sit in the page cache.
func Warm(paths []string) error {
	buf := make([]byte, 1<<20)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		for err == nil {
			_, err = f.Read(buf)
		}
		f.Close()
		if err != io.EOF {
			return err
		}
	}
	return nil
}
