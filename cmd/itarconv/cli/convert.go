package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/internal/safefile"
)

type convertFlags struct {
	shardSize string
	jsonOut   bool
	force     bool
	from, to  string
	workers   int
	formats   formatOptions   // the formats' options, as flags
	values    registry.Values // their values, once parsed
	taskFlags
	cmd *cobra.Command // for the flags the user set
}

// conversion is the conversion as the formats' declarations see it.
func (fl convertFlags) conversion(srcs []string) registry.Conversion {
	v := registry.Values{"shard-size": fl.shardSize}
	for k, x := range fl.values {
		v[k] = x
	}
	return registry.Conversion{From: fl.from, To: fl.to, Srcs: srcs, Values: v}
}

// fold is the --fold flag: the fold of tar shards read or written.
func (fl convertFlags) fold() string { return fl.values.String("fold") }

func newConvertCmd(e *env) *cobra.Command {
	var fl convertFlags
	cmd := &cobra.Command{
		Use:   "convert SRC... DST",
		Short: "Convert a dataset between " + convertibleFormats(),
		Long: `Convert moves a dataset between formats. The source's format is told by its
content, the target's by its path (.barecat, .tbl, an existing target, else
a directory of tar shards); --from and --to override them:

  itarconv convert SHARDS... OUT.barecat          tar shards -> Barecat
  itarconv convert IN.barecat OUTDIR              Barecat -> tar shards + TARIDX
  itarconv convert SHARDS... OUT.tbl              tar shards -> TBL (v2, or --tbl-version 1)
  itarconv convert 'data/*.tar.gz' OUTDIR         compressed shards -> plain tar shards (names
                                                  kept) + TARIDX
  itarconv convert SRC -                          any dataset -> one tar stream on stdout
  itarconv convert IN.tbl OUTDIR                  TBL -> tar shards + TARIDX
  itarconv convert SCDL_DIR OUTDIR                SCDL -> tar shards + TARIDX
  itarconv convert --to scdl DIR SCDL_DIR         tar shards (either SCDL mode) -> SCDL
  itarconv convert IN.barecat OUT.tbl             Barecat -> TBL
  itarconv convert IN.tbl OUT.barecat             TBL -> Barecat
  itarconv convert SCDL_DIR OUT.barecat|OUT.tbl   SCDL -> Barecat or TBL (cells, other files
                                                  under scdlmeta/; --scdl-mode archive)
  itarconv convert --to scdl IN.barecat|IN.tbl SCDL_DIR
                                                  Barecat or TBL v2 -> SCDL
  itarconv convert --to parquet SHARDS... OUTDIR  tar shards -> Hugging Face Parquet
                                                  (OUTDIR/data/train-00000-of-0000N.parquet)
  itarconv convert --to mds SHARDS... OUTDIR      tar shards -> MosaicML MDS (index.json +
                                                  shard.NNNNN.mds)
  itarconv convert HUB_DIR|MDS_DIR OUTDIR         Parquet or MDS -> tar shards + TARIDX

Every pair converts directly, never through a tar fold on disk. An existing
output is refused unless --force, which replaces it once the new one is
complete. Converting a dataset into its own format is a usage error.

Tar shards come from a directory (its folds by name: <fold>_<suffix>.tar as
glzn names them, else name-000000.tar by the number; one fold or --fold), an
index (the shards it indexes), or a shard set in the order given: files, a
brace pattern 'data/train-{000000..000146}.tar', a glob 'data/*.tar', @FILE
(one shard a line), or - (a tar stream on stdin). Shards compressed with
gzip, zstd, bzip2 or xz are told by their bytes and decompressed once, on
the workers, beside the output; into a directory they become an indexed fold
of plain shards, each decompressed as it is (--shard-size rewrites them).
DST - writes one tar stream to stdout (no index). Every regular member becomes a
Barecat file (all of them, not only those with extensions), hard links
become files with their target's bytes, directories keep their metadata;
symbolic links, devices and fifos are skipped and counted. --wrap copies no
data: the archive's shards are relative symbolic links to the tar shards.

From Barecat, files go in path order (--order address: shard and offset
order, the fast path) into <fold>_NNNN.tar shards of --shard-size, with
mode, uid, gid and mtime (0644, 0, 0, 0 where the archive has none), then
the fold's .taridx. With --reuse-tars, a wrapped archive (whose shards are
tar files) gets only an index over those tars, after every file has been
checked against its tar member. Outputs appear only when complete.`,
		Args: argsBetween(2, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.cmd = cmd
			fl.jsonOut = e.jsonOut
			fl.values = fl.formats.values()
			return runConvert(cmd.Context(), e, fl, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.shardSize, "shard-size", "", "roll output shards over past this size (e.g. 1GiB, 512MiB; default 1GiB for tar, none for Barecat)")
	f.IntVar(&fl.workers, "workers", defaultWorkers(), "shards scanned in parallel")
	fl.taskFlags.add(cmd)
	names := strings.Join(formatNames(), ", ")
	f.StringVar(&fl.to, "to", "", "target format, where the path cannot tell it: "+names)
	f.StringVar(&fl.from, "from", "", "source format, where the content cannot tell it: "+names)
	fl.formats = addFormatFlags(f)
	f.BoolVar(&fl.force, "force", false, "replace an existing output (once the new one is complete)")
	return cmd
}

// parseSize reads a byte count with an optional unit: 1GiB, 512MiB, 64KiB,
// 1G, 100M (powers of 1024 either way), or plain bytes.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSuffix(t, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("size %q: want a positive number of bytes, such as 1GiB or 512MiB", s)
	}
	return int64(n * float64(mult)), nil
}

// tarSources resolves the tar shards to read: a directory's fold, or files.
func tarSources(args []string, foldName string) ([]string, string, error) {
	shards, name, err := fold.Shards(args, foldName)
	if errors.Is(err, fold.ErrChooseFold) {
		return nil, "", usageError{err}
	}
	return shards, name, err
}

func runConvert(ctx context.Context, e *env, fl convertFlags, args []string) error {
	srcs, dst := args[:len(args)-1], args[len(args)-1]
	srcs, lstats, err := expandTaskArgs(ctx, e, fl.taskFlags, srcs, dst)
	if err != nil {
		return err
	}
	shardSize, stats, err := resolveConvertFlags(e, &fl, srcs, lstats, dst)
	if err != nil {
		return err
	}
	task, partitioned, err := fl.taskFlags.resolve(e.getenv)
	if err != nil {
		return err
	}
	if dst == convert.Stream {
		if partitioned {
			return usagef("-: a tar stream on standard output is one run, not parts to merge")
		}
		return e.convert(ctx, fl, srcs, stats, dst, shardSize)
	}
	if err := checkOverwrite(srcs, dst, fl); err != nil {
		return err
	}
	// One rule for every command: the directories the output goes into
	// are made (parents too), and removed again, with a directory output
	// the conversion made, when the run fails.
	created := safefile.MissingDirs(dst)
	if _, err := makeOutputDirs(filepath.Dir(filepath.Clean(dst))); err != nil {
		return err
	}
	if partitioned {
		err = e.convertTask(ctx, fl, srcs, stats, dst, shardSize, task)
	} else {
		err = e.convert(ctx, fl, srcs, stats, dst, shardSize)
	}
	if err != nil {
		safefile.RemoveCreated(created)
	}
	return err
}

// resolveConvertFlags checks the flags against the sources and the
// destination before anything is read or written, settling fl's workers
// and formats in place (a task and a single run both need them), and
// returns --shard-size in bytes and what os.Stat said of each source
// (guardConvert; lstats: what the expansion of the arguments said). The
// checks run in the order the messages have always come in: the first
// wrong flag is the one named.
func resolveConvertFlags(e *env, fl *convertFlags, srcs []string, lstats []fs.FileInfo, dst string) (shardSize int64, stats []fs.FileInfo, err error) {
	if fl.shardSize != "" {
		if shardSize, err = parseSize(fl.shardSize); err != nil {
			return 0, nil, usageError{err}
		}
	}
	if fl.workers < 1 {
		return 0, nil, usagef("--workers must be at least 1")
	}
	fl.workers = e.shardWorkers(fl.cmd, fl.workers, srcs)
	if err := validateFold(fl.fold()); err != nil {
		return 0, nil, err
	}
	if fl.from, fl.to, err = convert.Formats(srcs, dst, fl.from, fl.to); err != nil {
		return 0, nil, usagef("--from, --to: %v (known: %s)", err, strings.Join(formatNames(), ", "))
	}
	if err := checkStreamFlags(*fl, dst); err != nil {
		return 0, nil, err
	}
	if stats, err = guardConvert(srcs, lstats, dst, *fl); err != nil {
		return 0, nil, err
	}
	if err := checkClaimedSource(srcs); err != nil {
		return 0, nil, err
	}
	c := fl.conversion(srcs)
	if src := registry.Lookup(fl.from); fl.from == fl.to && (src.Recodes == nil || !src.Recodes(c, dst)) {
		hint := ""
		if fl.to == fold.FormatName {
			hint = " (--shard-size writes new shards; index indexes these in place)"
		}
		return 0, nil, usagef("convert: %s is already %s: nothing to convert%s", strings.Join(srcs, " "), label(fl.to), hint)
	}
	if err := checkConvertFlags(fl.formats, c); err != nil {
		return 0, nil, err
	}
	// The format options are parsed once here so that a bad value is a
	// usage error before a task starts, not a failure halfway through.
	if _, err := convertOptions(*fl, shardSize); err != nil {
		return 0, nil, err
	}
	return shardSize, stats, nil
}

// checkStreamFlags refuses what a tar stream on standard output cannot
// carry: another format, JSON beside the stream, a fold's layout flags.
func checkStreamFlags(fl convertFlags, dst string) error {
	if dst != convert.Stream {
		return nil
	}
	if fl.to != fold.FormatName {
		return usagef("-: a conversion writes standard output as one tar stream only, not %s", label(fl.to))
	}
	if fl.jsonOut {
		return usagef("--json prints to standard output, which carries the tar stream")
	}
	if fl.shardSize != "" || fl.values.Int("cells-per-shard") != 0 || fl.values.Bool("reuse-tars") || fl.force {
		return usagef("--shard-size, --cells-per-shard, --reuse-tars and --force apply to a fold of tar shards, not a stream")
	}
	return nil
}

// convert is the one library call, with a progress bar over the source's
// bytes counting its rows (members of tar shards, files, samples).
func (e *env) convert(ctx context.Context, fl convertFlags, srcs []string, stats []fs.FileInfo, dst string, shardSize int64) error {
	o, err := convertOptions(fl, shardSize)
	o.Memory = e.memory
	if err != nil {
		return err
	}
	if convert.SeveralShards(srcs, fl.from) {
		// Found with the guard's stats: not stat'ed again, each of
		// thousands.
		if o.Found, err = convert.FindShardsKnown(srcs, stats, o); err != nil {
			return err
		}
	}
	o.Stdout = e.stdout
	what := fl.to
	if fl.to == fold.FormatName && dst != convert.Stream {
		what = fold.OutputNaming(dst, fl.conversion(srcs)).Fold
	}
	bar := e.convertProgress(what, fl.from, srcs, o)
	o.Progress = func(p dataset.Progress) { bar.update(what, p) }
	res, err := convert.Convert(bar.counting(ctx), srcs, dst, o)
	bar.done(err)
	if err != nil {
		return err
	}
	for _, w := range res.Warnings {
		e.warnf("%s\n", w)
	}
	e.infof("%s\n", res.Summary)
	if fl.jsonOut {
		return e.setResult(res.Stats)
	}
	return nil
}

// convertProgress is a conversion's bar: over the bytes of its tar
// shards, read one by one, or over the payload bytes of another source,
// which it reads by chunks. Sizing a remote source asks its server: only
// for a bar.
func (e *env) convertProgress(what, from string, srcs []string, o convert.ConvertOptions) *progress {
	if !e.barShown() {
		return nil
	}
	if from == fold.FormatName {
		if f := o.Found; f != nil {
			// The shards the command found, and its stats of them.
			return e.newShardProgress(what, f.Shards, knownSizes(f.Infos), false)
		}
		if shards, err := convert.ConvertInputs(srcs, o); err == nil {
			return e.newShardProgress(what, shards, nil, false)
		}
	}
	total, unit := sourceSize(from, srcs, o)
	return e.newProgress(what, total).of(unit)
}

// convertOptions are the library's options for the flags.
func convertOptions(fl convertFlags, shardSize int64) (convert.ConvertOptions, error) {
	v := fl.values
	o := convert.ConvertOptions{From: fl.from, To: fl.to, Workers: fl.workers, Overwrite: fl.force, ShardSize: shardSize}
	// The layout the source is read in: its option that says so, where
	// it applies.
	c := fl.conversion(nil)
	src, tgt := registry.Lookup(fl.from), registry.Lookup(fl.to)
	if src != nil {
		for _, opt := range src.Options {
			if opt.Mode && opt.AppliesTo(c, registry.Read) {
				o.Mode = v.String(opt.Name)
			}
		}
	}
	// Each format makes its own options of the values, typed: the one
	// way they reach the library.
	var err error
	if src != nil && src.ParseOptions != nil {
		if o.Source, err = src.ParseOptions(registry.Read, v); err != nil {
			return o, usageError{err}
		}
	}
	if tgt != nil && tgt.ParseOptions != nil {
		if o.Target, err = tgt.ParseOptions(registry.Write, v); err != nil {
			return o, usageError{err}
		}
	}
	return o, nil
}

// sourceSize is the bytes a conversion reads and what its rows are, for
// the progress bar; zero when the source cannot tell.
func sourceSize(from string, srcs []string, o convert.ConvertOptions) (int64, string) {
	f := registry.Lookup(from)
	if f == nil || f.Open == nil {
		return 0, ""
	}
	d, err := f.Open(srcs, o.SourceOptions())
	if err != nil {
		return 0, ""
	}
	defer d.Close()
	return d.Size(), d.Unit()
}

// label is a format's name in messages.
func label(name string) string {
	if f := registry.Lookup(name); f != nil {
		return f.Label
	}
	return name
}

// formatNames are the formats a conversion can read or write.
func formatNames() []string {
	var names []string
	for _, f := range registry.All() {
		if f.Open != nil || f.Create != nil {
			names = append(names, f.Name)
		}
	}
	return names
}

// makeOutputDirs makes the directories outputs go into ("" is none
// given), parents too, and returns those it made, deepest first, for
// safefile.RemoveCreated when the run fails.
func makeOutputDirs(dirs ...string) ([]string, error) {
	var created []string
	for _, dir := range dirs {
		if dir == "" {
			continue
		}
		missing := safefile.MissingDirs(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			safefile.RemoveCreated(created)
			return nil, fmt.Errorf("making the output directory %s: %w", dir, err)
		}
		created = append(missing, created...)
	}
	return created, nil
}

// convertibleFormats names the registered formats a conversion reads or
// writes, as messages label them: "tar, Barecat, ... and TBL".
func convertibleFormats() string {
	var labels []string
	for _, f := range registry.All() {
		if f.Open == nil && f.Create == nil {
			continue
		}
		labels = append(labels, f.Label)
	}
	if len(labels) < 2 {
		return "formats"
	}
	return strings.Join(labels[:len(labels)-1], ", ") + " and " + labels[len(labels)-1]
}
