package fold

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/remote"
	"github.com/itarconv/itarconv/shardset"
	"github.com/itarconv/itarconv/spool"
)

// The tar format is a fold of tar shards: read from a directory (one of
// its folds) or from tar files in order, written as a fold of shards with
// its TARIDX index.
func init() {
	registry.Register(&registry.Format{Name: FormatName, Label: "tar", Detect: tarfile.Detect, Claims: claims,
		Open: openDataset, Create: create, CheckOptions: checkOptions, CreatePart: createPart, MergeParts: mergeParts,
		Inputs: inputs, Outputs: outputs, Options: options, ParseOptions: parseOptions, Recodes: recodes})
}

// parseOptions makes the tar format's own options of the flags' values:
// an OpenOptions for reading, a CreateOptions for writing.
func parseOptions(dir registry.Direction, v registry.Values) (any, error) {
	if dir == registry.Read {
		return OpenOptions{Fold: v.String("fold"), Scan: tarfile.Options{IgnoreZeros: v.Bool("ignore-zeros")}}, nil
	}
	o := CreateOptions{Fold: v.String("fold"), Name: v.String("name")}
	if o.Name != "" {
		if err := tarfile.CheckPattern(o.Name); err != nil {
			return nil, fmt.Errorf("--name: %w", err)
		}
	}
	return o, nil
}

// checkOptions refuses, before anything is read, a --name that is no
// pattern or names no new shards, and source shards that would keep one
// name (ErrNameClash).
func checkOptions(c registry.Conversion) error {
	if c.To != FormatName {
		return nil
	}
	name := c.Values.String("name")
	if name != "" {
		if _, err := PatternFold("", name); err != nil {
			return fmt.Errorf("--name: %w", err)
		}
		switch {
		case c.From == scdlFormat:
			return errors.New("--name: SCDL into tar shards writes folds of their own names (--fold names the first)")
		case c.Values.Bool("reuse-tars"):
			return errors.New("--name: --reuse-tars writes no shards, only an index over the tars as they are")
		}
		return nil
	}
	if c.From != FormatName || c.Values.String("fold") != "" || c.Values.String("shard-size") != "" {
		return nil
	}
	// Shards decompressed one to one keep their names: two of one name
	// are refused before anything is written.
	shards, _, err := Shards(c.Srcs, "")
	if err != nil {
		return nil // the conversion says what is wrong with them
	}
	_, err = UnpackNaming(shards, UnpackOptions{})
	if errors.Is(err, ErrNameClash) {
		return err
	}
	return nil
}

// FormatName is the tar format's name in the registry.
const FormatName = "tar"

// options are the tar format's options, as flags.
var options = []registry.Option{
	{Name: "fold", Type: registry.String, Help: "fold to read from a directory of shards, or to write as <fold>_NNNN.tar shards, glzn's names " +
		"(default: shards decompressed one to one keep their names; new shards are train_NNNN.tar)",
		Dir: registry.Read | registry.Write, Refused: "--fold names the fold of tar shards to read or write"},
	{Name: "ignore-zeros", Type: registry.Bool, Default: "false", Help: IgnoreZerosHelp,
		Dir: registry.Read, Applies: "reading tar shards"},
	{Name: "name", Type: registry.String, Help: NameHelp, Dir: registry.Write, Applies: "writing tar shards"},
}

// NameHelp is the help of --name.
const NameHelp = "name the tar shards written by a `PATTERN` in WebDataset's ShardWriter notation, one integer verb: " +
	"'imagenet-val-%06d.tar'; the index is named after the prefix before the number, its trailing '-', '_' or '.' trimmed " +
	"(imagenet-val.taridx), with a manifest naming the shards. Default: compressed shards decompressed one to one keep " +
	"their names (imagenet-val-000000.tar.gz -> imagenet-val-000000.tar, index imagenet-val.taridx); " +
	"new shards, or with --fold, are <fold>_NNNN.tar"

// IgnoreZerosHelp is the help of the option every format that reads tar
// shards declares.
const IgnoreZerosHelp = "read tar shards past zero blocks (concatenated archives)"

// inputs: a directory's tar shards, or the file itself.
func inputs(path string) []string {
	entries, err := os.ReadDir(path)
	if err != nil {
		return []string{path}
	}
	var shards []string
	for _, e := range entries {
		if _, _, ok := shardset.TrimSuffix(e.Name()); ok && !e.IsDir() {
			shards = append(shards, filepath.Join(path, e.Name()))
		}
	}
	return shards
}

// The folds a conversion from SCDL writes (package convert's SCDL*Fold;
// fold cannot import convert): its cells, or its files as an archive,
// and the archive's other files.
const (
	scdlFormat      = "scdl"
	scdlCellsFold   = "cells"
	scdlArchiveFold = "scdl"
	scdlMetaFold    = "scdlmeta"
)

// outputs: the index and the shards of each fold written into the
// directory path. With --reuse-tars, only the index, rebuilt over the
// tars that stay.
func outputs(path string, c registry.Conversion) registry.Outputs {
	var o registry.Outputs
	fold := c.Values.String("fold")
	if c.Values.Bool("reuse-tars") {
		idx := filepath.Join(path, cmp.Or(fold, "train")+".taridx")
		if _, err := os.Lstat(idx); err == nil {
			o.Rebuilt = append(o.Rebuilt, idx)
		}
		return o
	}
	folds := []string{cmp.Or(fold, "train")}
	if c.From == scdlFormat {
		folds = []string{cmp.Or(fold, scdlCellsFold), scdlMetaFold}
		if c.Values.String("scdl-mode") == "archive" {
			folds = []string{cmp.Or(fold, scdlArchiveFold)}
		}
	} else if n := OutputNaming(path, c); !n.glzn {
		// Shards named otherwise than <fold>_NNNN.tar: those of these
		// names, and any other shard of the fold by its name.
		o.Replaced = FoldOutputs(path, n)
		return o
	} else {
		folds = []string{n.Fold}
	}
	for _, f := range folds {
		idx := filepath.Join(path, f+".taridx")
		if _, err := os.Lstat(idx); err == nil {
			o.Replaced = append(o.Replaced, idx)
		}
		shards, _ := filepath.Glob(filepath.Join(globQuote(path), globQuote(f)+"_*.tar"))
		o.Replaced = append(o.Replaced, shards...)
	}
	return o
}

// OutputNaming is how conversion c names the fold of tar shards it
// writes into dir: the fold (its index is <Fold>.taridx) and, where known
// before it runs (shards kept one to one), the shards' names. From SCDL,
// the first of the folds written.
func OutputNaming(dir string, c registry.Conversion) Naming {
	fold, name := c.Values.String("fold"), c.Values.String("name")
	if c.From == scdlFormat {
		first := scdlCellsFold
		if c.Values.String("scdl-mode") == "archive" {
			first = scdlArchiveFold
		}
		return Naming{Fold: cmp.Or(fold, first), glzn: true}
	}
	if c.From == FormatName && c.Values.String("shard-size") == "" {
		if shards, _, err := Shards(c.Srcs, fold); err == nil {
			if n, err := UnpackNaming(shards, UnpackOptions{Dir: dir, Fold: fold, Name: name}); err == nil {
				return n
			}
		}
	}
	n, err := WriteNaming(WriteOptions{Dir: dir, Fold: fold, Name: name})
	if err != nil {
		return Naming{Fold: cmp.Or(fold, "train"), glzn: true}
	}
	return n
}

// globQuote escapes the pattern characters of a literal path.
func globQuote(s string) string {
	return strings.NewReplacer(`*`, `\*`, `?`, `\?`, `[`, `\[`, `\`, `\\`).Replace(s)
}

// recodes: tar shards into tar shards do something when some are
// compressed (or a stream), or the target is a stream.
func recodes(c registry.Conversion, dst string) bool {
	if dst == "-" || c.Values.String("shard-size") != "" {
		return true // a stream, or new shards of that size
	}
	shards, _, err := Shards(c.Srcs, c.Values.String("fold"))
	if err != nil {
		// The conversion says what is wrong with them (several folds,
		// none chosen; a shard missing), not "nothing to convert".
		return true
	}
	need, _ := spool.Needed(shards)
	return need
}

// claims: a tar shard by its name (.tar, or a compressed tar's suffix), or
// a directory holding some (a fold of shards).
func claims(path string) bool {
	if _, _, ok := shardset.TrimSuffix(filepath.Base(path)); ok {
		return true
	}
	if st, err := os.Stat(path); err != nil || !st.IsDir() {
		return false
	}
	entries, _ := os.ReadDir(path)
	for _, e := range entries {
		if _, _, ok := shardset.TrimSuffix(e.Name()); ok && !e.IsDir() {
			return true
		}
	}
	return false
}

// ErrChooseFold: a directory holds several folds and none was chosen.
var ErrChooseFold = errors.New("the directory holds several folds: choose one with --fold")

// OpenOptions are the tar format's own options for registry.Open.
type OpenOptions struct {
	Fold string // the fold to read from a directory of several
	Scan tarfile.Options
	// Spool decompresses compressed shards (and standard input); without
	// one, a dataset with such shards makes its own, in the system's
	// temporary directory, removed by Close.
	Spool *spool.Spool
}

// CreateOptions are the tar format's own options for registry.Create.
type CreateOptions struct {
	// Fold names the fold and its shards glzn's way, <fold>_NNNN.tar
	// (default "train", or, for shards decompressed one to one, their own
	// names: UnpackOptions.Fold).
	Fold string
	// Name names the shards by a pattern instead (WriteOptions.Name).
	Name       string
	MaxMembers int // also start a new shard after this many members
}

// Shards resolves what to read as a fold. One directory gives one of its
// folds (the only one, or the one named): its shards as shardset.Discover
// groups them, or those the manifest of an index in it names. One index
// file gives the shards it indexes (Open). Anything else is a shard set
// (shardset.Resolve: files, brace patterns, globs, @FILE lists), read in
// the order given. It returns the shards and the fold's name ("" for a
// shard set).
//
// Shards named by a manifest are checked against it first: a shard whose
// size (or, remote, ETag) differs from what the manifest recorded is an
// ErrStale error, as ls, cat and verify report it, never read as if it
// were the one indexed.
func Shards(paths []string, foldName string) ([]string, string, error) {
	return ShardsContext(context.Background(), paths, foldName)
}

// ShardsContext is Shards with the context of the checks it makes of
// remote shards.
func ShardsContext(ctx context.Context, paths []string, foldName string) ([]string, string, error) {
	shards, _, name, err := ShardsInfo(ctx, paths, foldName)
	return shards, name, err
}

// ShardsInfo is ShardsContext that also gives what os.Stat says of each
// shard of a set given as files (nil for a URL or standard input, and
// for every shard of a directory or of an index, which it does not
// stat): their sizes, for one, need not be asked again.
func ShardsInfo(ctx context.Context, paths []string, foldName string) ([]string, []fs.FileInfo, string, error) {
	return ShardsKnown(ctx, paths, nil, foldName)
}

// ShardsKnown is ShardsInfo for paths the caller has stat'ed: known[i],
// where set, is os.Stat (or os.Lstat) of paths[i], not asked again
// (shardset.ResolveKnown).
func ShardsKnown(ctx context.Context, paths []string, known []fs.FileInfo, foldName string) ([]string, []fs.FileInfo, string, error) {
	if len(paths) == 1 {
		var k fs.FileInfo
		if len(known) == 1 {
			k = known[0]
		}
		st, err := shardset.StatResolved(paths[0], k)
		if err == nil && st.IsDir() {
			shards, name, err := dirShards(ctx, paths[0], foldName)
			return shards, nil, name, err
		}
		if err == nil && strings.HasSuffix(paths[0], ".taridx") && taridx.Detect(paths[0]) {
			f, err := Open(paths[0], nil)
			if err != nil {
				return nil, nil, "", err
			}
			if err := f.CheckManifest(ctx); err != nil {
				return nil, nil, "", err
			}
			return f.Shards, nil, f.Name, nil
		}
	}
	shards, infos, err := shardset.ResolveKnown(ctx, paths, known)
	if err != nil {
		return nil, nil, "", err
	}
	stats := make([]fs.FileInfo, len(shards))
	for i, p := range shards {
		if p == spool.Stdin || remote.IsURL(p) {
			continue // a remote shard is checked when read
		}
		st, err := shardset.StatResolved(p, infos[i])
		if err != nil {
			return nil, nil, "", err
		}
		if st.IsDir() {
			return nil, nil, "", fmt.Errorf("%s is a directory: give one directory, or tar files", p)
		}
		stats[i] = st
	}
	return shards, stats, "", nil
}

// dirShards finds a directory's folds: its shards grouped by name, and
// the folds the manifests of its indexes name (shards kept elsewhere).
func dirShards(ctx context.Context, dir, foldName string) ([]string, string, error) {
	folds, err := shardset.Discover(dir)
	if err != nil {
		return nil, "", err
	}
	found := map[string]bool{}
	for _, f := range folds {
		found[f.Name] = true
	}
	manifests := map[string]*Manifest{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".taridx")
		if !ok || found[name] || e.IsDir() {
			continue
		}
		m, err := ReadManifest(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, "", err
		}
		folds = append(folds, shardset.Fold{Name: name, Shards: m.Paths(dir)})
		manifests[name] = m
		found[name] = true
	}
	var names []string
	for _, f := range folds {
		names = append(names, f.Name)
		if foldName == "" && len(folds) == 1 || f.Name == foldName {
			if m := manifests[f.Name]; m != nil {
				idx := filepath.Join(dir, f.Name+".taridx")
				if err := checkManifest(ctx, idx, f.Shards, m.Sizes(), m.ETags()); err != nil {
					return nil, "", err
				}
			}
			return f.Shards, f.Name, nil
		}
	}
	if foldName != "" {
		return nil, "", fmt.Errorf("%s: no fold %q (folds: %s): %w", dir, foldName, strings.Join(names, ", "), fs.ErrNotExist)
	}
	if len(folds) == 0 {
		return nil, "", fmt.Errorf("%s: no tar shards (files ending in %s): %w", dir, strings.Join(shardset.Suffixes, ", "), fs.ErrNotExist)
	}
	return nil, "", fmt.Errorf("%s holds folds %s: %w", dir, strings.Join(names, ", "), ErrChooseFold)
}

// tarDataset is a fold open for reading through the registry: its
// members, header by header.
type tarDataset struct {
	shards    []string
	scan      tarfile.Options
	spool     *spool.Spool
	ownsSpool bool
}

func (d *tarDataset) source() *TarShards {
	src := NewTarShards(d.shards, d.scan)
	src.Spool = d.spool
	return src
}

func openDataset(paths []string, o registry.OpenOptions) (registry.Dataset, error) {
	opts, err := registry.FormatOptions[OpenOptions]("tar", o.Format)
	if err != nil {
		return nil, err
	}
	shards, _, err := Shards(paths, opts.Fold)
	if err != nil {
		return nil, err
	}
	d := &tarDataset{shards: shards, scan: opts.Scan, spool: opts.Spool}
	if d.spool == nil {
		need, err := spool.Needed(shards)
		if err != nil {
			return nil, err
		}
		if need {
			d.spool, d.ownsSpool = spool.New(os.TempDir(), os.Stdin), true
		}
	}
	return d, nil
}

func (d *tarDataset) Rows(bool) (dataset.PayloadSource, error) {
	return d.source(), nil
}

func (d *tarDataset) List(ctx context.Context, fn func(registry.Entry) error) error {
	src := d.source()
	return dataset.Run(ctx, src, dataset.RowFunc(func(shard int, r *dataset.Row) error {
		return fn(registry.Entry{Name: string(r.Name), Size: r.Size, Fields: []registry.Field{
			{Key: "shard", Value: filepath.Base(d.shards[shard])}, {Key: "offset", Value: r.Offset}}})
	}), dataset.Options{})
}

// ReadEntry reads the last regular member of that name, as extracting the
// shards would leave it. It scans the headers: an indexed fold (package
// fold's Open) finds a member without reading them.
func (d *tarDataset) ReadEntry(name string) ([]byte, error) {
	src := d.source()
	defer src.Close()
	var found *dataset.Row
	err := dataset.Run(context.Background(), src, dataset.RowFunc(func(_ int, r *dataset.Row) error {
		if r.Kind == dataset.KindFile && string(r.Name) == name {
			c := *r
			found = &c
		}
		return nil
	}), dataset.Options{Workers: 1})
	if err != nil {
		return nil, err
	}
	if found == nil {
		return nil, fmt.Errorf("%s: no member %s: %w", strings.Join(d.shards, ", "), name, fs.ErrNotExist)
	}
	return dataset.ReadPayload(src, found)
}

func (d *tarDataset) Size() int64 {
	var n int64
	for _, p := range d.shards {
		if size, err := ShardSize(context.Background(), p); err == nil {
			n += size
		}
	}
	return n
}

func (d *tarDataset) Unit() string       { return "members" }
func (d *tarDataset) Warnings() []string { return nil }
func (d *tarDataset) Close() error {
	if d.ownsSpool {
		return d.spool.Close()
	}
	return nil
}

// create writes in's rows as a fold of tar shards in the directory path,
// with its index.
// createPart writes a task's part of a fold (registry.Format.CreatePart).
func createPart(ctx context.Context, in registry.Input, dir string, o registry.CreateOptions) (any, error) {
	// The fold is named when the parts are merged; its shards are the
	// task's, rolled over as one run rolls them over.
	opts, err := registry.FormatOptions[CreateOptions]("tar", o.Format)
	if err != nil {
		return nil, err
	}
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	return WritePart(ctx, src, dir, WriteOptions{ShardSize: o.ShardSize, MaxMembers: opts.MaxMembers, Workers: o.Workers, Progress: o.Progress,
		Index: IndexOptions{Memory: o.Memory}})
}

// mergeParts writes the fold of a partitioned run from its parts
// (registry.Format.MergeParts).
func mergeParts(ctx context.Context, parts []string, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := registry.FormatOptions[CreateOptions]("tar", o.Format)
	if err != nil {
		return nil, err
	}
	st, ms, err := MergeParts(ctx, parts, WriteOptions{Dir: path, Fold: opts.Fold, Name: opts.Name, ShardSize: o.ShardSize, MaxMembers: opts.MaxMembers,
		Workers: o.Workers, Replace: o.Overwrite, Index: IndexOptions{Memory: o.Memory}})
	if err != nil {
		return nil, err
	}
	res := writeResult(st, path, "members", "parts")
	res.Summary += fmt.Sprintf(", merged from %d parts (%d shards linked, %s copied)", ms.Parts, ms.Linked, human.Bytes(ms.CopiedBytes))
	res.Stats = &registry.MergedStats{Format: "fold", Stats: st, Merge: ms}
	return res, nil
}

func create(ctx context.Context, in registry.Input, path string, o registry.CreateOptions) (*registry.Result, error) {
	opts, err := registry.FormatOptions[CreateOptions]("tar", o.Format)
	if err != nil {
		return nil, err
	}
	src, err := in.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(src)
	st, err := Write(ctx, src, WriteOptions{Dir: path, Fold: opts.Fold, Name: opts.Name, ShardSize: o.ShardSize, MaxMembers: opts.MaxMembers,
		Workers: o.Workers, Progress: o.Progress, Replace: o.Overwrite, Index: IndexOptions{Memory: o.Memory}})
	if err != nil {
		return nil, err
	}
	unit := "members"
	if d, ok := in.(registry.Dataset); ok {
		unit = d.Unit()
	}
	return writeResult(st, path, unit, registry.InputName(in)), nil
}

// writeResult reports a fold written at path from what, whose rows are
// unit.
func writeResult(st *WriteStats, path, unit, what string) *registry.Result {
	res := &registry.Result{Output: path, Members: st.Members, Bytes: st.Bytes, Stats: st, Summary: fmt.Sprintf("%d members, %s into %s of fold %s in %s; index %s (%d members)",
		st.Members, human.Bytes(st.Bytes), human.Count(len(st.Shards), "shard"), st.FoldName(), path, filepath.Base(st.Index.Output), st.Index.Rows)}
	if w := NotIndexed(st.Index, unit); w != "" {
		res.Warnings = append(res.Warnings, what+": "+w)
	}
	return res
}
