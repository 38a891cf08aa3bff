package convert

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/tbl"
	"github.com/itarconv/itarconv/internal/human"
	"github.com/itarconv/itarconv/spool"
)

// ErrNoConverter: no conversion between the two formats (one of them can
// be neither read nor written, or the pair makes no sense).
var ErrNoConverter = errors.New("no converter between these formats")

// ErrSameFormat: the source is already in the target format.
var ErrSameFormat = errors.New("the source is already in the target format")

// ErrUnknownFormat: a format name no package registered.
var ErrUnknownFormat = errors.New("unknown format")

// ConvertOptions tune Convert. The zero value converts with the defaults
// of every format.
type ConvertOptions struct {
	// From and To name the formats ("tar", "barecat", "tbl", "scdl", or
	// any registered one); "" tells them (Formats).
	From, To string
	Workers  int
	// Overwrite replaces an existing output once the new one is complete;
	// without it an existing output is refused.
	Overwrite bool
	// ShardSize rolls output shards over past this size (0: the target's
	// default).
	ShardSize int64
	Progress  func(dataset.Progress)
	// Memory bounds what the conversion keeps of every member until its
	// end, past which it spills beside the output (0: the target's
	// default). Tar shards into Barecat or TBL take it.
	Memory int64
	// Window bounds the disk that the copies of remote tar shards (URLs)
	// take at once, beside the output, as the conversion streams them
	// (spool.Spool.Window; 0: spool.DefaultWindow, 256 MiB). The shard
	// being written, and one read again out of order, come whatever
	// their size.
	Window int64
	// Stdin is read for a tar shard named "-" (default os.Stdin); Stdout
	// is written for the target "-", one tar stream (default os.Stdout).
	Stdin  io.Reader
	Stdout io.Writer

	// Found, when set, are the tar shards that the sources it names were
	// found to be (FindShards'): a caller that found them
	// already (a partitioned run's task, for its manifest) saves finding
	// them again, which takes a stat of each.
	Found *FoundShards

	// Mode is how a source with several layouts is read: SCDL "cells"
	// (default) or "archive"; Barecat "path" or "address" order (default:
	// path order into tar, address order, the order files were added in,
	// into other formats).
	Mode string

	// Source and Target hold the source's and the target's own options,
	// of the type its package documents (registry.Format.ParseOptions
	// makes them of option values): fold.OpenOptions and
	// fold.CreateOptions for tar shards (the fold, the scan),
	// barecat.OpenOptions and barecat.CreateOptions (--reuse-tars;
	// --wrap, --crc, --on-duplicate), scdl.OpenOptions (cells per
	// shard), tbl.RowsOptions for writing TBL (version, LZ4, names,
	// compat). Every conversion reads them, convert's own converters as
	// the registry's Open and Create do; nil takes the defaults, and a
	// value of a type the format does not take is an error wrapping
	// registry.ErrOptionsType, never its defaults.
	Source, Target any
}

// Formats names a conversion's source format (by content, else by name or
// layout; several paths are tar shards) and target format (an existing
// target's, by content, else by the name a format claims (.barecat, .tbl);
// else a directory of tar shards). from and to, when set, are taken as
// they are.
func Formats(srcs []string, dst, from, to string) (string, string, error) {
	for _, f := range []string{from, to} {
		if f != "" && registry.Lookup(f) == nil {
			return "", "", fmt.Errorf("%w %q", ErrUnknownFormat, f)
		}
	}
	if from == "" {
		from = "tar"
		if len(srcs) == 1 {
			f := registry.Detect(srcs[0])
			if f == nil {
				f = registry.Claimed(srcs[0])
			}
			if f != nil && f.Name != "taridx" { // an index stands for its fold
				from = f.Name
			}
		}
	}
	if to == "" {
		to = "tar"
		if f := registry.Claimed(dst); f != nil && f.Name != "taridx" {
			to = f.Name
		}
	}
	return from, to, nil
}

// SeveralShards tells whether srcs, read as the format from (Formats),
// are tar shards given one by one: then each is known for one without
// being probed.
func SeveralShards(srcs []string, from string) bool { return len(srcs) > 1 && from == "tar" }

// pair is a conversion written for two formats, where it does more than
// the registry's Open and Create can: tar shards read in place (duplicate
// policies, wrapping, TurboLoader's selection), SCDL's two folds, the
// index of a wrapped archive's tars.
type pair func(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error)

var pairs = map[[2]string]pair{
	{"tar", "barecat"}: tarPairToBarecat,
	{"tar", "tbl"}:     tarToTBL,
	{"tar", "scdl"}:    tarToSCDL,
	{"scdl", "tar"}:    scdlToTar,
	{"barecat", "tar"}: barecatPairToTar,
	{"tbl", "scdl"}:    tblPairToSCDL,
}

// Convert converts the dataset at srcs (one path, or tar shards) into a new
// dataset at dst, in the formats o names or Formats tells. Every pair of
// registered formats converts directly, without staging through another
// format on disk: a pair with a converter of its own (tar shards to
// Barecat, TBL or SCDL, SCDL to tar) uses it; any other opens the source
// through the registry and creates the target from its rows.
func Convert(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	from, to, err := Formats(srcs, dst, o.From, o.To)
	if err != nil {
		return nil, err
	}
	src := registry.Lookup(from)
	if from == to && from != "tar" {
		return nil, fmt.Errorf("%s is already %s: %w", strings.Join(srcs, " "), src.Label, ErrSameFormat)
	}
	o.From, o.To = from, to
	if dst == Stream && to == "tar" {
		if tgt, err := o.tarTarget(); err == nil && tgt.Name != "" {
			return nil, fmt.Errorf("a tar stream on standard output has no shards for the pattern %q to name: %w", tgt.Name, tarfile.ErrNamePattern)
		}
		return toStream(ctx, srcs, o)
	}
	if from == "tar" && to == "tar" {
		// Compressed shards, or a stream, into an indexed fold of plain
		// tar shards: the one conversion from tar to tar.
		return tarToTar(ctx, srcs, dst, o)
	}
	if p := pairs[[2]string{from, to}]; p != nil {
		return p(ctx, srcs, dst, o)
	}
	return throughRegistry(ctx, srcs, dst, o)
}

// spool reads a conversion's compressed tar shards (and standard input)
// through decompressed copies beside dst, on the output's file system;
// the caller closes it, which removes them.
func (o ConvertOptions) spool(dst string) *spool.Spool {
	return o.spoolIn(filepath.Dir(filepath.Clean(dst)))
}

// spoolIn is a spool writing its copies into dir. Remote shards stream
// through it: it holds at most a window of them on disk (spool.Window),
// never the whole dataset.
func (o ConvertOptions) spoolIn(dir string) *spool.Spool {
	sp := spool.New(dir, cmp.Or[io.Reader](o.Stdin, os.Stdin))
	sp.Window = cmp.Or(max(o.Window, 0), spool.DefaultWindow)
	return sp
}

// openSource opens the source through its format's Open. Tar shards get a
// spool writing decompressed copies into spoolDir, closed with the
// dataset.
func (o ConvertOptions) openSource(srcs []string, spoolDir string) (registry.Dataset, error) {
	srcOpts := o.Source
	var sp *spool.Spool
	if o.From == "tar" {
		tarOpts, err := o.tarSource()
		if err != nil {
			return nil, err
		}
		if tarOpts.Spool == nil {
			sp = o.spoolIn(spoolDir)
			tarOpts.Spool = sp
		}
		srcOpts = tarOpts
	}
	d, err := registry.Lookup(o.From).Open(srcs, registry.OpenOptions{Mode: o.sourceMode(), Format: srcOpts})
	if err != nil {
		sp.Close()
		return nil, err
	}
	if sp == nil {
		return d, nil
	}
	return spooled{d, sp}, nil
}

// spooled is a dataset whose compressed shards' copies go with it.
type spooled struct {
	registry.Dataset
	spool *spool.Spool
}

func (s spooled) Close() error {
	err := s.Dataset.Close()
	s.spool.Close()
	return err
}

// ErrNothingToConvert: tar shards into tar shards, when none is
// compressed or a stream.
var ErrNothingToConvert = errors.New("the shards are plain tar already: nothing to convert (itarconv index indexes them in place)")

// tarToTar writes compressed tar shards, or a tar stream, as an indexed
// fold of plain tar shards: each shard decompressed as it is (fold.Unpack),
// or, with a shard size, its members written anew into shards of that
// size.
func tarToTar(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	shards, src, err := o.tarShards(srcs)
	if err != nil {
		return nil, err
	}
	tgt, err := o.tarTarget()
	if err != nil {
		return nil, err
	}
	need, err := spool.Needed(shards)
	if err != nil {
		return nil, err
	}
	if o.ShardSize > 0 {
		// New shard boundaries: the members are written anew.
		return throughRegistry(ctx, shards, dst, o)
	}
	if !need {
		return nil, fmt.Errorf("%s: %w", strings.Join(srcs, " "), errors.Join(ErrSameFormat, ErrNothingToConvert))
	}
	uo := fold.UnpackOptions{Dir: dst, Fold: tgt.Fold, Name: tgt.Name, Workers: o.Workers, Replace: o.Overwrite, Stdin: o.Stdin,
		Progress: o.Progress, Index: fold.IndexOptions{Scan: src.Scan, Memory: o.Memory}}
	naming, err := fold.UnpackNaming(shards, uo)
	if err != nil {
		return nil, err
	}
	st, err := fold.Unpack(ctx, shards, uo)
	if err != nil {
		return nil, err
	}
	names := "their own names"
	if !naming.Kept {
		names = filepath.Base(st.Shards[0])
		if len(st.Shards) > 1 {
			names += "..."
		}
	}
	res := &registry.Result{Output: dst, Members: st.Members, Bytes: st.Bytes, Stats: st, Summary: fmt.Sprintf("%d shards decompressed as they are, %s, into fold %s in %s (%s); index %s (%d members)",
		len(st.Shards), human.Bytes(st.Bytes), st.FoldName(), dst, names, filepath.Base(st.Index.Output), st.Index.Rows)}
	if naming.Note != "" {
		res.Warnings = append(res.Warnings, fmt.Sprintf("shard names not kept: %s; written as fold %s (%s...): convert each fold on its own to keep their names, or name them (--name)",
			naming.Note, naming.Fold, naming.Names[0]))
	}
	if w := fold.NotIndexed(st.Index, "members"); w != "" {
		res.Warnings = append(res.Warnings, w)
	}
	return res, nil
}

// Stream is the target name of one tar stream on standard output.
const Stream = "-"

// toStream writes any dataset as one tar stream on o.Stdout: the members
// a conversion to a fold would write, without an index.
func toStream(ctx context.Context, srcs []string, o ConvertOptions) (*registry.Result, error) {
	src := registry.Lookup(o.From)
	if src.Open == nil {
		return nil, fmt.Errorf("from %s to a tar stream: %w", src.Label, ErrNoConverter)
	}
	// A stream has no directory: copies of compressed shards go to the
	// system's temporary one.
	d, err := o.openSource(srcs, os.TempDir())
	if err != nil {
		return nil, err
	}
	defer d.Close()
	rows, err := d.Rows(false)
	if err != nil {
		return nil, err
	}
	defer registry.CloseSource(rows)
	st, err := fold.WriteStream(ctx, rows, cmp.Or[io.Writer](o.Stdout, os.Stdout), fold.StreamOptions{Workers: o.Workers, Progress: o.Progress})
	if err != nil {
		return nil, err
	}
	res := &registry.Result{Output: Stream, Members: st.Members, Bytes: st.Bytes, Stats: st, Summary: fmt.Sprintf("%s: %d members, %s as a tar stream on standard output",
		strings.Join(srcs, " "), st.Members, human.Bytes(st.Bytes))}
	if n := st.Skipped["hardlink"] + st.Skipped["other"]; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d entries a tar member here cannot hold (hard links, devices, fifos) left out", n))
	}
	res.Warnings = append(d.Warnings(), res.Warnings...)
	return res, nil
}

// sourceMode is the layout the source is read in.
func (o ConvertOptions) sourceMode() string {
	if o.Mode == "" && o.From == "barecat" {
		if o.To == "tar" {
			return "path"
		}
		return "address"
	}
	return o.Mode
}

// SourceOptions are the options Convert opens its source with (through
// the registry): the layout it is read in and the source format's own
// options. A compressed tar shard is spooled by the dataset itself.
func (o ConvertOptions) SourceOptions() registry.OpenOptions {
	return registry.OpenOptions{Mode: o.sourceMode(), Format: o.Source}
}

// targetOptions are the target format's own options, as the registry's
// Create takes them. TurboLoader's selection applies to tar shards only,
// which a converter of its own writes into TBL (tblTarget).
func (o ConvertOptions) targetOptions() (any, error) {
	if o.To != "tbl" {
		return o.Target, nil
	}
	t, err := registry.FormatOptions[tbl.RowsOptions]("TBL", o.Target)
	if err != nil || t.Compat == "" {
		return t, err
	}
	if err := checkCompat(t); err != nil {
		return nil, err
	}
	return nil, errCompatNotTar
}

// tarSource is what a converter of its own reads tar shards with: the
// tar format's options, as the registry's Open takes them, so that a
// pair reads the same options as any other conversion, and refuses those
// of another type as it would.
func (o ConvertOptions) tarSource() (fold.OpenOptions, error) {
	return registry.FormatOptions[fold.OpenOptions]("tar", o.Source)
}

// tarTarget is what a converter of its own writes a fold with: the tar
// format's options, as the registry's Create takes them.
func (o ConvertOptions) tarTarget() (fold.CreateOptions, error) {
	return registry.FormatOptions[fold.CreateOptions]("tar", o.Target)
}

// barecatSource and barecatTarget are Barecat's options, as the
// registry's Open and Create take them.
func (o ConvertOptions) barecatSource() (barecat.OpenOptions, error) {
	return registry.FormatOptions[barecat.OpenOptions]("Barecat", o.Source)
}

func (o ConvertOptions) barecatTarget() (barecat.CreateOptions, error) {
	return registry.FormatOptions[barecat.CreateOptions]("Barecat", o.Target)
}

// scdlSource is SCDL's options, as the registry's Open takes them.
func (o ConvertOptions) scdlSource() (scdl.OpenOptions, error) {
	return registry.FormatOptions[scdl.OpenOptions]("SCDL", o.Source)
}

// tarShards are the tar shards a pair reads, and the options it reads
// them with.
func (o ConvertOptions) tarShards(srcs []string) ([]string, fold.OpenOptions, error) {
	shards, _, src, err := o.tarShardsInfo(srcs)
	return shards, src, err
}

// tarShardsInfo is tarShards with what os.Stat said of each shard given
// as a file (fold.ShardsInfo).
func (o ConvertOptions) tarShardsInfo(srcs []string) ([]string, []fs.FileInfo, fold.OpenOptions, error) {
	return o.tarShardsKnown(srcs, nil)
}

// tarShardsKnown is tarShardsInfo with the caller's stats of srcs
// (fold.ShardsKnown).
func (o ConvertOptions) tarShardsKnown(srcs []string, known []fs.FileInfo) ([]string, []fs.FileInfo, fold.OpenOptions, error) {
	src, err := o.tarSource()
	if err != nil {
		return nil, nil, src, err
	}
	if f := o.Found; f != nil && f.Fold == src.Fold && slices.Equal(f.Srcs, srcs) {
		return f.Shards, f.Infos, src, nil
	}
	shards, infos, _, err := fold.ShardsKnown(context.Background(), srcs, known, src.Fold)
	return shards, infos, src, err
}

// FoundShards are the tar shards the sources Srcs name (with --fold
// Fold), and what os.Stat said of each (nil where nothing was stat'ed).
type FoundShards struct {
	Srcs   []string
	Fold   string
	Shards []string
	Infos  []fs.FileInfo
}

// tblTarget is what tar shards are written into TBL with: the TBL
// format's own options (tbl.RowsOptions, as the registry's Create takes
// them), whose Compat "turboloader" selects members as TurboLoader does.
func (o ConvertOptions) tblTarget() (TBLOptions, error) {
	t, err := registry.FormatOptions[tbl.RowsOptions]("TBL", o.Target)
	if err != nil {
		return TBLOptions{}, err
	}
	if err := checkCompat(t); err != nil {
		return TBLOptions{}, err
	}
	return TBLOptions{Version: t.Version, LZ4: t.LZ4, NoNames: t.NoNames, CompatTurboLoader: t.Compat == compatTurboLoaderName}, nil
}

func tarPairToBarecat(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	b, err := o.barecatTarget()
	if err != nil {
		return nil, err
	}
	shards, src, err := o.tarShards(srcs)
	if err != nil {
		return nil, err
	}
	opts := BarecatOptions{Wrap: b.Wrap, CRC: b.CRC, OnDuplicate: b.OnDuplicate}
	opts.ShardSize, opts.Workers, opts.Overwrite, opts.Scan, opts.Progress = o.ShardSize, o.Workers, o.Overwrite, src.Scan, o.Progress
	opts.Memory = o.Memory
	opts.Spool = o.spool(dst)
	defer opts.Spool.Close()
	st, err := TarToBarecat(ctx, shards, dst, opts)
	if err != nil {
		return nil, err
	}
	res := &registry.Result{Output: st.Output, Members: st.Files, Bytes: st.Bytes, Stats: st}
	if n := st.Skipped["symlink"] + st.Skipped["other"]; n > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d members not converted (%d symbolic links, %d devices or fifos): Barecat holds files and directories only",
			n, st.Skipped["symlink"], st.Skipped["other"]))
	}
	if st.Duplicates > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d duplicate paths: kept the %s of each", st.Duplicates, opts.OnDuplicate))
	}
	mode := "copied"
	if opts.Wrap {
		mode = "wrapped"
	}
	res.Summary = fmt.Sprintf("%s: %d files (%d hard links), %d directories, %s %s from %d tar shards into %d shards",
		dst, st.Files, st.Hardlinks, st.Dirs, human.Bytes(st.Bytes), mode, len(shards), st.Shards)
	return res, nil
}

func tarToTBL(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	opts, err := o.tblTarget()
	if err != nil {
		return nil, err
	}
	shards, src, err := o.tarShards(srcs)
	if err != nil {
		return nil, err
	}
	opts.Workers, opts.Scan, opts.Progress, opts.Overwrite = o.Workers, src.Scan, o.Progress, o.Overwrite
	opts.Memory = o.Memory
	opts.Spool = o.spool(dst)
	defer opts.Spool.Close()
	st, err := TarToTBL(ctx, shards, dst, opts)
	if err != nil {
		return nil, err
	}
	return tbl.Result(st, fmt.Sprintf("%d tar shards", len(shards))), nil
}

func scdlToTar(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	if len(srcs) != 1 {
		return nil, fmt.Errorf("SCDL is one directory, not %d paths", len(srcs))
	}
	src, err := o.scdlSource()
	if err != nil {
		return nil, err
	}
	tgt, err := o.tarTarget()
	if err != nil {
		return nil, err
	}
	if tgt.Name != "" {
		return nil, fmt.Errorf("%s: SCDL into tar shards writes folds of their own names, which a shard name pattern (%q) cannot give: %w",
			srcs[0], tgt.Name, tarfile.ErrNamePattern)
	}
	a, err := scdl.OpenContext(ctx, srcs[0])
	if err != nil {
		return nil, err
	}
	defer a.Close()
	mode := cmp.Or(o.Mode, scdl.ModeCells)
	st, err := SCDLToTar(ctx, a, SCDLExportOptions{
		Dir: dst, Mode: mode, Fold: tgt.Fold, ShardSize: o.ShardSize, CellsPerShard: src.CellsPerShard,
		Workers: o.Workers, Progress: o.Progress, Replace: o.Overwrite,
	})
	if err != nil {
		return nil, err
	}
	label := cmp.Or(tgt.Fold, map[string]string{scdl.ModeCells: SCDLCellsFold, scdl.ModeArchive: SCDLArchiveFold}[mode])
	res := &registry.Result{Output: dst, Members: st.Fold.Members, Bytes: st.Fold.Bytes, Stats: st}
	if st.Meta != nil {
		res.Members, res.Bytes = res.Members+st.Meta.Members, res.Bytes+st.Meta.Bytes
	}
	if st.Mode == scdl.ModeCells {
		res.Summary = fmt.Sprintf("%s: %d cells, %d values -> %d members in %d shards of fold %s, and %d files in fold %s, in %s",
			srcs[0], st.Cells, st.NNZ, st.Fold.Members, len(st.Fold.Shards), label, st.Meta.Members, SCDLMetaFold, dst)
	} else {
		res.Summary = fmt.Sprintf("%s: %d files, %s -> %s of fold %s in %s", srcs[0], st.Fold.Members, human.Bytes(st.Fold.Bytes), human.Count(len(st.Fold.Shards), "shard"), label, dst)
	}
	return res, nil
}

func barecatPairToTar(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	src, err := o.barecatSource()
	if err != nil {
		return nil, err
	}
	if !src.ReuseTars {
		return throughRegistry(ctx, srcs, dst, o)
	}
	if len(srcs) != 1 {
		return nil, fmt.Errorf("a Barecat archive is one path, not %d", len(srcs))
	}
	tgt, err := o.tarTarget()
	if err != nil {
		return nil, err
	}
	if tgt.Name != "" {
		return nil, fmt.Errorf("%s: reusing its tars writes no shards, only an index over them, which a shard name pattern (%q) cannot name: %w",
			srcs[0], tgt.Name, tarfile.ErrNamePattern)
	}
	a, err := barecat.Open(srcs[0])
	if err != nil {
		return nil, err
	}
	defer a.Close()
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return nil, err
	}
	out := filepath.Join(dst, cmp.Or(tgt.Fold, "train")+".taridx")
	st, err := ReuseTars(ctx, a, out, fold.IndexOptions{Workers: o.Workers, Scan: src.Scan, Memory: o.Memory})
	if err != nil {
		return nil, err
	}
	ix := st.Index
	stats := map[string]any{"index": out, "shards": st.Tars, "files_checked": st.Files, "rows": ix.Rows,
		"skipped_no_extension": ix.NoExt, "skipped_space_in_extension": ix.SpaceInExt,
		"skipped_examples": append([]string{}, ix.SkippedNames...)}
	res := &registry.Result{Output: dst, Members: int64(ix.Rows), Bytes: ix.Bytes, Stats: stats, Summary: fmt.Sprintf("%s: %d files checked against their tar members; %s indexes %d members of %s",
		srcs[0], st.Files, out, st.Index.Rows, strings.Join(st.Tars, " "))}
	if w := fold.NotIndexed(st.Index, "files"); w != "" {
		res.Warnings = append(res.Warnings, srcs[0]+": "+w)
	}
	return res, nil
}

// throughRegistry converts through the registry's Open and Create, as
// Convert does for a pair without a converter of its own.
func throughRegistry(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	src, tgt := registry.Lookup(o.From), registry.Lookup(o.To)
	if src.Open == nil || tgt.Create == nil {
		return nil, fmt.Errorf("from %s to %s: %w", src.Label, tgt.Label, ErrNoConverter)
	}
	d, err := o.openSource(srcs, filepath.Dir(filepath.Clean(dst)))
	if err != nil {
		return nil, err
	}
	defer d.Close()
	format, err := o.targetOptions()
	if err != nil {
		return nil, err
	}
	d = keepNames(d, o.To)
	res, err := tgt.Create(ctx, named{d, strings.Join(srcs, " ")}, dst, registry.CreateOptions{Workers: o.Workers, Overwrite: o.Overwrite,
		ShardSize: o.ShardSize, Progress: o.Progress, Memory: o.Memory, Format: format})
	if err != nil {
		return nil, err
	}
	res.Warnings = append(d.Warnings(), res.Warnings...)
	return res, nil
}

// keepNames makes a TBL source keep, in metadata members, the names that
// the target would store otherwise (Barecat normalizes paths), so that
// converting back gives them as they were.
func keepNames(d registry.Dataset, to string) registry.Dataset {
	if to != "barecat" {
		return d
	}
	return barecatNames{d}
}

// barecatNames is a dataset whose TBL rows keep the names Barecat changes.
type barecatNames struct{ registry.Dataset }

func (b barecatNames) Rows(listing bool) (dataset.PayloadSource, error) {
	src, err := b.Dataset.Rows(listing)
	if s, ok := src.(*tbl.Source); ok {
		s.NameChanged = barecatChanges
	}
	return src, err
}

// barecatChanges tells whether Barecat stores a path otherwise.
func barecatChanges(name string) bool {
	p, err := barecat.NormalizePath(name)
	return err == nil && p != name
}

// named is an opened dataset with the paths it was opened from.
type named struct {
	registry.Dataset
	name string
}

func (n named) Name() string { return n.name }

// tarToSCDL rebuilds an archive from the folds of a directory.
func tarToSCDL(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	if len(srcs) != 1 {
		return nil, fmt.Errorf("SCDL is rebuilt from one directory of folds, not %d paths", len(srcs))
	}
	if err := registry.NoOptions("SCDL", o.Target); err != nil {
		return nil, err
	}
	src, err := o.tarSource()
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(srcs[0]); err != nil {
		return nil, err
	} else if !st.IsDir() {
		return nil, fmt.Errorf("%s is not a directory: SCDL is rebuilt from the folds of a directory", srcs[0])
	}
	spool := o.spool(dst)
	defer spool.Close()
	st, err := TarToSCDL(ctx, srcs[0], dst, SCDLImportOptions{Fold: src.Fold, Overwrite: o.Overwrite, Workers: o.Workers, Progress: o.Progress, Spool: spool})
	if err != nil {
		return nil, err
	}
	what := srcs[0]
	if st.Fold != "" {
		what = "fold " + st.Fold
	}
	return SCDLResult(st, what), nil
}

// tblPairToSCDL refuses, before anything is read, a TBL file without names:
// an SCDL archive is rebuilt from its files' names.
func tblPairToSCDL(ctx context.Context, srcs []string, dst string, o ConvertOptions) (*registry.Result, error) {
	if len(srcs) == 1 {
		if err := tblKeepsNames(srcs[0]); err != nil {
			return nil, err
		}
	}
	return throughRegistry(ctx, srcs, dst, o)
}

// SCDLResult reports an archive rebuilt from what (scdl.Result, with
// these stats).
func SCDLResult(st *SCDLImportStats, what string) *registry.Result {
	res := scdl.Result(&scdl.RowsStats{Output: st.Output, Mode: st.Mode, Cells: st.Cells, NNZ: st.NNZ, Files: st.Files, Fresh: st.Fresh}, what)
	res.Stats = st
	return res
}

// ErrNoNames: the source keeps no file names (TBL v1, or v2 without its
// metadata section), so a format that needs them cannot be rebuilt.
var ErrNoNames = errors.New("the source keeps no file names")

// tblKeepsNames refuses, before anything is read, a TBL file whose
// samples have no names: an SCDL archive is rebuilt from its files' names.
func tblKeepsNames(path string) error {
	r, err := tbl.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	if r.Version() < 2 || !r.HasMetadata() {
		return fmt.Errorf("%s: TBL v%d without a metadata section keeps no file names (its samples are %%09d.<ext>): an SCDL archive cannot be rebuilt from it; convert the archive to TBL v2 with names: %w",
			path, r.Version(), ErrNoNames)
	}
	return nil
}
