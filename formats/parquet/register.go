package parquet

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
)

func init() {
	registry.Register(&registry.Format{Name: "parquet", Label: "Parquet", Detect: Detect, Claims: claims,
		Open: open, Create: create, CreatePart: createPart, MergeParts: mergeParts, Inspect: inspect, Verify: verify,
		Damaged: damaged, Inputs: inputs, Outputs: outputs, Options: options, ParseOptions: parseOptions, CheckOptions: checkOptions})
}

// OpenOptions are Parquet's own options for reading
// (registry.OpenOptions.Format).
type OpenOptions struct {
	// Split reads only that split of a directory ("": every split).
	Split string
}

// options are Parquet's options, as flags.
var options = []registry.Option{
	{Name: "parquet-split", Type: registry.String, Help: `Parquet: the split written ("train" by default), or the only one read (default: every split)`,
		Dir: registry.Read | registry.Write, Applies: "Parquet"},
	{Name: "parquet-compression", Type: registry.String, Default: "none", Help: "writing Parquet: the pages' codec: none, snappy, zstd or gzip",
		Dir: registry.Write, Applies: "writing Parquet"},
}

func parseOptions(dir registry.Direction, v registry.Values) (any, error) {
	if dir == registry.Read {
		return OpenOptions{Split: v.String("parquet-split")}, nil
	}
	o := CreateOptions{Split: v.String("parquet-split"), Compression: v.String("parquet-compression")}
	if o.Split != "" {
		if err := checkSplit(o.Split); err != nil {
			return nil, fmt.Errorf("--parquet-split: %w", err)
		}
	}
	if _, err := codec(o.Compression); err != nil {
		return nil, fmt.Errorf("--parquet-compression: %w", err)
	}
	return o, nil
}

func checkOptions(c registry.Conversion) error {
	if c.To != "parquet" {
		return nil
	}
	if s := c.Values.String("parquet-split"); s != "" {
		if err := checkSplit(s); err != nil {
			return fmt.Errorf("--parquet-split: %w", err)
		}
	}
	if _, err := codec(c.Values.String("parquet-compression")); err != nil {
		return fmt.Errorf("--parquet-compression: %w", err)
	}
	return nil
}

const magic = "PAR1"

// isFile tells whether path is a Parquet file by its bytes: "PAR1" at its
// start and at its end.
func isFile(path string) bool {
	f, err := pathguard.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 12 {
		return false
	}
	var head, tail [4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return false
	}
	if _, err := f.ReadAt(tail[:], st.Size()-4); err != nil {
		return false
	}
	return string(head[:]) == magic && string(tail[:]) == magic
}

// dirFiles are the .parquet files directly in dir and in dir/data, by
// name.
func dirFiles(dir string) []string {
	var out []string
	for _, d := range []string{dir, filepath.Join(dir, "data")} {
		ents, err := os.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range ents {
			if !e.IsDir() && strings.HasSuffix(e.Name(), ".parquet") && !strings.HasPrefix(e.Name(), ".") {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out
}

// Detect tells whether path is a Parquet file, or a directory holding one
// (directly, or in data/ as the Hub lays them out), by their bytes.
func Detect(path string) bool {
	st, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !st.IsDir() {
		return isFile(path)
	}
	files := dirFiles(path)
	return len(files) > 0 && isFile(files[0])
}

// claims: a .parquet file, or a directory of them (directly or in data/).
func claims(path string) bool {
	if strings.HasSuffix(path, ".parquet") {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir() && len(dirFiles(path)) > 0
}

// damaged: the error opening a path that claims to be Parquet.
func damaged(path string) error {
	d, err := Open(path)
	if err == nil {
		d.Close()
	}
	return err
}

// inputs: the Parquet files a dataset reads.
func inputs(path string) []string {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return []string{path}
	}
	splits, _ := findSplits(path)
	var files []string
	for _, s := range splits {
		for _, f := range s.files {
			files = append(files, filepath.Join(path, filepath.FromSlash(f)))
		}
	}
	return files
}

// outputs: the directory and every file in it.
func outputs(path string, _ registry.Conversion) registry.Outputs {
	var o registry.Outputs
	if _, err := os.Lstat(path); err != nil {
		return o
	}
	o.Replaced = append(o.Replaced, path)
	filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			o.Replaced = append(o.Replaced, p)
		}
		return nil
	})
	return o
}

func open(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	opts, err := registry.FormatOptions[OpenOptions]("Parquet", o.Format)
	if err != nil {
		return nil, err
	}
	f := registry.Lookup("parquet")
	path, err := registry.OnePath(f, paths)
	if err != nil {
		return nil, err
	}
	return OpenSplit(path, opts.Split)
}

// ErrNoSplit: the split asked for is not in the dataset.
var ErrNoSplit = errors.New("no such split")

// OpenSplit opens one split of a dataset directory ("": every split).
func OpenSplit(path, split string) (*Dataset, error) {
	d, err := Open(path)
	if err != nil || split == "" {
		return d, err
	}
	var names []string
	var files []*File
	for _, f := range d.files {
		if f.Split == split {
			files = append(files, f)
		} else {
			f.Close()
		}
		if len(names) == 0 || names[len(names)-1] != f.Split {
			names = append(names, f.Split)
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: split %q (splits: %s): %w", path, split, strings.Join(names, ", "), ErrNoSplit)
	}
	nd := &Dataset{path: path, warns: d.warns}
	for _, f := range files {
		nd.files = append(nd.files, f)
		row := f.FirstRow
		for g, rg := range f.pf.Metadata().RowGroups {
			nd.groups = append(nd.groups, group{file: len(nd.files) - 1, index: g, first: row, size: rg.TotalCompressedSize})
			row += rg.NumRows
		}
	}
	return nd, nil
}

// create writes the rows of in as a Hub dataset directory at path:
// data/<split>-NNNNN-of-NNNNN.parquet, staged beside it and put in place
// whole.
func create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := registry.FormatOptions[CreateOptions]("Parquet", o.Format)
	if err != nil {
		return nil, err
	}
	wo, err := settle(opts, o.ShardSize, o.Workers, o.Progress)
	if err != nil {
		return nil, err
	}
	if err := checkTarget(path, o.Overwrite); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := stage(path, o.Overwrite, func(dir string) (*WriteStats, error) {
		data := filepath.Join(dir, "data")
		if err := os.Mkdir(data, 0o755); err != nil {
			return nil, err
		}
		st, err := writeInput(ctx, in, data, wo)
		if err != nil {
			return nil, err
		}
		for i := range st.Files {
			st.Files[i] = "data/" + st.Files[i]
		}
		return st, nil
	})
	if err != nil {
		return nil, err
	}
	return result(st, path, registry.InputName(in)), nil
}

func result(st *WriteStats, path, what string) *registry.Result {
	return &registry.Result{Output: path, Members: st.Members, Bytes: st.Bytes, Stats: st,
		Summary: fmt.Sprintf("%d members, %s, from %s into %d rows of %s in %s",
			st.Members, human.Bytes(st.Bytes), what, st.Rows, human.Count(len(st.Files), "Parquet file"), path)}
}

// checkTarget refuses an existing output without overwrite, and, with it,
// one that is not a Parquet dataset.
func checkTarget(path string, overwrite bool) error {
	st, err := os.Lstat(path)
	if err != nil {
		return nil
	}
	if !overwrite {
		return fmt.Errorf("%s: %w", path, fs.ErrExist)
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: not a directory of Parquet files, not replaced: %w", path, fs.ErrExist)
	}
	if ents, _ := os.ReadDir(path); len(ents) > 0 && !Detect(path) {
		return fmt.Errorf("%s: not a Parquet dataset, not replaced: %w", path, fs.ErrExist)
	}
	return nil
}

// stage runs write in a temporary directory beside path and puts it in
// place once complete (replacing what is there with overwrite); on any
// error it removes it.
func stage(path string, overwrite bool, write func(dir string) (*WriteStats, error)) (*WriteStats, error) {
	parent, base := filepath.Split(filepath.Clean(path))
	if parent == "" {
		parent = "."
	}
	safefile.SweepLeftovers(parent)
	dir, err := os.MkdirTemp(parent, safefile.TempName(base))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	st, err := write(dir)
	if err == nil {
		if overwrite {
			err = safefile.ReplaceDir(dir, path)
		} else {
			err = safefile.CommitDir(dir, path)
		}
	}
	if err != nil {
		os.RemoveAll(dir)
		if !strings.Contains(err.Error(), path) {
			err = fmt.Errorf("%s: %w", path, err)
		}
		return nil, err
	}
	return st, nil
}
