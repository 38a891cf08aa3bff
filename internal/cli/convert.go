package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/convert"
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/formats/tarscan"
	"github.com/itarconv/itarconv/formats/tbl"
)

type convertFlags struct {
	fold, shardSize, onDuplicate, order string
	wrap, crc, ignoreZeros, jsonOut     bool
	force                               bool
	reuseTars, lz4, noNames             bool
	tblVersion, cellsPerShard           int
	compat, from, to, scdlMode          string
	workers                             int
}

func newConvertCmd(e *env) *cobra.Command {
	var fl convertFlags
	cmd := &cobra.Command{
		Use:   "convert SRC... DST",
		Short: "Convert a dataset between tar shards (+ TARIDX), Barecat, TBL and SCDL",
		Long: `Convert moves a dataset between formats. The source's format is told by its
content, the target's by its path (.barecat, .tbl, an existing target, else
a directory of tar shards); --from and --to override them:

  itarconv convert DIR|SHARD.tar... OUT.barecat   tar shards -> Barecat
  itarconv convert IN.barecat OUTDIR              Barecat -> tar shards + TARIDX
  itarconv convert DIR|SHARD.tar... OUT.tbl       tar shards -> TBL (v2, or --tbl-version 1)
  itarconv convert IN.tbl OUTDIR                  TBL -> tar shards + TARIDX
  itarconv convert SCDL_DIR OUTDIR                SCDL -> tar shards + TARIDX
  itarconv convert --to scdl DIR SCDL_DIR         tar shards (either SCDL mode) -> SCDL
  itarconv convert IN.barecat OUT.tbl             Barecat -> TBL
  itarconv convert IN.tbl OUT.barecat             TBL -> Barecat
  itarconv convert SCDL_DIR OUT.barecat|OUT.tbl   SCDL -> Barecat or TBL (cells, other files
                                                  under scdlmeta/; --scdl-mode archive)
  itarconv convert --to scdl IN.barecat|IN.tbl SCDL_DIR
                                                  Barecat or TBL v2 -> SCDL

Every pair converts directly, never through a tar fold on disk. An existing
output is refused unless --force, which replaces it once the new one is
complete. Converting a dataset into its own format is a usage error.

Tar shards come from a directory (its <fold>_<suffix>.tar files, one fold or
--fold) or from tar files in the order given. Every regular member becomes a
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
		RunE: func(cmd *cobra.Command, args []string) error { return runConvert(cmd.Context(), e, fl, args) },
	}
	f := cmd.Flags()
	f.StringVar(&fl.fold, "fold", "", "fold to read from a directory of shards, or to write (default train)")
	f.StringVar(&fl.shardSize, "shard-size", "", "roll output shards over past this size (e.g. 1GiB, 512MiB; default 1GiB for tar, none for Barecat)")
	f.BoolVar(&fl.wrap, "wrap", false, "Barecat: copy no data; shards are links to the tar shards")
	f.BoolVar(&fl.crc, "crc", false, "with --wrap: compute every file's crc32c (reads all payloads)")
	f.StringVar(&fl.onDuplicate, "on-duplicate", "", `"first" or "last": which member keeps a duplicated path (default: refuse)`)
	f.StringVar(&fl.order, "order", "path", `from Barecat: "path" or "address" (shard, offset)`)
	f.BoolVar(&fl.ignoreZeros, "ignore-zeros", false, "read tar shards past zero blocks (concatenated archives)")
	f.BoolVar(&fl.reuseTars, "reuse-tars", false, "from a wrapped Barecat: write only OUTDIR/<fold>.taridx over the tars its shards link to, after checking every member")
	f.IntVar(&fl.workers, "workers", defaultWorkers(), "shards scanned in parallel")
	f.IntVar(&fl.tblVersion, "tbl-version", 2, "TBL: format version to write, 1 or 2")
	f.BoolVar(&fl.lz4, "lz4", false, "TBL v2: an LZ4 block per sample where it is smaller")
	f.BoolVar(&fl.noNames, "no-names", false, "TBL v2: leave member names out of the metadata section")
	f.StringVar(&fl.compat, "compat", "", `TBL: "turboloader" selects members as TurboLoader's v2 converter does (byte-identical output)`)
	f.StringVar(&fl.to, "to", "", `target format, where the path cannot tell it: tar, barecat, tbl or scdl`)
	f.StringVar(&fl.from, "from", "", `source format, where the content cannot tell it: tar, barecat, tbl or scdl`)
	f.StringVar(&fl.scdlMode, "scdl-mode", "cells", `reading SCDL: "cells" (a sample per cell) or "archive" (every file as a member)`)
	f.IntVar(&fl.cellsPerShard, "cells-per-shard", 0, "SCDL to tar, cells mode: start a new shard after this many cells")
	f.BoolVar(&fl.jsonOut, "json", false, "print the result as JSON")
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
func tarSources(args []string, fold string) ([]string, string, error) {
	if len(args) == 1 {
		st, err := os.Stat(args[0])
		if err != nil {
			return nil, "", err
		}
		if st.IsDir() {
			folds, err := taridx.Discover(args[0])
			if err != nil {
				return nil, "", err
			}
			var names []string
			for _, f := range folds {
				names = append(names, f.Name)
				if fold == "" && len(folds) == 1 || f.Name == fold {
					return f.Shards, f.Name, nil
				}
			}
			if fold != "" {
				return nil, "", fmt.Errorf("%s: no fold %q (folds: %s)", args[0], fold, strings.Join(names, ", "))
			}
			if len(folds) == 0 {
				return nil, "", fmt.Errorf("%s: no <fold>_<suffix>.tar shards", args[0])
			}
			return nil, "", usagef("%s holds folds %s: choose one with --fold", args[0], strings.Join(names, ", "))
		}
	}
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, "", err
		}
		if st.IsDir() {
			return nil, "", usagef("%s is a directory: give one directory, or tar files", a)
		}
	}
	return args, "", nil
}

func runConvert(ctx context.Context, e *env, fl convertFlags, args []string) error {
	srcs, dst := args[:len(args)-1], args[len(args)-1]
	var shardSize int64
	if fl.shardSize != "" {
		n, err := parseSize(fl.shardSize)
		if err != nil {
			return usageError{err}
		}
		shardSize = n
	}
	if fl.workers < 1 {
		return usagef("--workers must be at least 1")
	}
	if fl.compat != "" && fl.compat != "turboloader" {
		return usagef("--compat: unknown implementation %q (turboloader)", fl.compat)
	}
	if err := validateFold(fl.fold); err != nil {
		return err
	}
	var err error
	if fl.from, fl.to, err = convertFormats(srcs, dst, fl); err != nil {
		return err
	}
	if err := guardConvert(srcs, dst, fl); err != nil {
		return err
	}
	if err := checkClaimedSource(srcs); err != nil {
		return err
	}
	if fl.from == fl.to {
		return usagef("convert: %s is already %s: nothing to convert", strings.Join(srcs, " "), label(fl.to))
	}
	if err := checkOverwrite(srcs, dst, fl); err != nil {
		return err
	}
	if fl.to == "tbl" || fl.to == "barecat" {
		if st, err := os.Stat(filepath.Dir(dst)); err != nil || !st.IsDir() {
			return usagef("%s: the directory %s does not exist", dst, filepath.Dir(dst))
		}
	}
	created := missingDirs(dst)
	err = dispatchConvert(ctx, e, fl, srcs, dst, shardSize)
	if err != nil {
		removeCreated(created)
	}
	return err
}

func dispatchConvert(ctx context.Context, e *env, fl convertFlags, srcs []string, dst string, shardSize int64) error {
	switch [2]string{fl.from, fl.to} {
	case [2]string{"tar", "scdl"}, [2]string{"barecat", "scdl"}, [2]string{"tbl", "scdl"}:
		return convertToSCDL(ctx, e, fl, srcs, dst)
	case [2]string{"scdl", "tar"}:
		return convertSCDLToTar(ctx, e, fl, srcs[0], dst, shardSize)
	case [2]string{"scdl", "barecat"}:
		return convertSCDLToBarecat(ctx, e, fl, srcs[0], dst, shardSize)
	case [2]string{"tar", "tbl"}, [2]string{"barecat", "tbl"}, [2]string{"scdl", "tbl"}:
		return convertToTBL(ctx, e, fl, srcs, dst)
	case [2]string{"tbl", "tar"}:
		return convertTBLToTar(ctx, e, fl, srcs[0], dst, shardSize)
	case [2]string{"tar", "barecat"}:
		return convertTarToBarecat(ctx, e, fl, srcs, dst, shardSize)
	case [2]string{"tbl", "barecat"}:
		return convertTBLToBarecat(ctx, e, fl, srcs[0], dst, shardSize)
	case [2]string{"barecat", "tar"}:
		return convertBarecatToTar(ctx, e, fl, srcs[0], dst, shardSize)
	}
	return usagef("convert: no converter from %s to %s", label(fl.from), label(fl.to))
}

// convertFormats names a conversion's source format (by content, or else
// by name or layout; several files are tar shards) and target format (by
// the target path's suffix, or an existing target's content; else a
// directory of tar shards). --from and --to override them.
func convertFormats(srcs []string, dst string, fl convertFlags) (from, to string, err error) {
	for _, f := range []string{fl.from, fl.to} {
		switch f {
		case "", "tar", "barecat", "tbl", "scdl":
		default:
			return "", "", usagef("--from, --to: unknown format %q (tar, barecat, tbl or scdl)", f)
		}
	}
	from, to = fl.from, fl.to
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
		switch {
		case strings.HasSuffix(dst, ".barecat"):
			to = "barecat"
		case strings.HasSuffix(dst, ".tbl"):
			to = "tbl"
		default:
			to = "tar"
			if f := registry.Detect(dst); f != nil && f.Name != "tar" && f.Name != "taridx" {
				to = f.Name
			}
		}
	}
	return from, to, nil
}

// label is a format's name in messages.
func label(name string) string {
	if f := registry.Lookup(name); f != nil {
		return f.Label
	}
	return name
}

func convertTarToBarecat(ctx context.Context, e *env, fl convertFlags, srcs []string, dst string, shardSize int64) error {
	if fl.order != "path" {
		return usagef("--order applies to reading a Barecat archive")
	}
	if fl.crc && !fl.wrap {
		return usagef("--crc goes with --wrap (a copy always computes crc32c)")
	}
	if fl.wrap && shardSize > 0 {
		return usagef("--shard-size does not apply to --wrap: the shards are the tar files")
	}
	switch fl.onDuplicate {
	case "", "first", "last":
	default:
		return usagef("--on-duplicate: %q is neither first nor last", fl.onDuplicate)
	}
	shards, _, err := tarSources(srcs, fl.fold)
	if err != nil {
		return err
	}
	bar := e.newProgress("barecat", totalSize(shards))
	st, err := convert.TarToBarecat(ctx, shards, dst, convert.BarecatOptions{
		Wrap: fl.wrap, CRC: fl.crc, OnDuplicate: fl.onDuplicate, ShardSize: shardSize, Workers: fl.workers, Overwrite: fl.force,
		Scan:     tarscan.Options{IgnoreZeros: fl.ignoreZeros},
		Progress: func(p convert.Progress) { bar.update("barecat", p) },
	})
	bar.done()
	if err != nil {
		return err
	}
	if n := st.Skipped["symlink"] + st.Skipped["other"]; n > 0 {
		e.warnf("%d members not converted (%d symbolic links, %d devices or fifos): Barecat holds files and directories only\n",
			n, st.Skipped["symlink"], st.Skipped["other"])
	}
	if st.Duplicates > 0 {
		e.warnf("%d duplicate paths: kept the %s of each\n", st.Duplicates, fl.onDuplicate)
	}
	mode := "copied"
	if fl.wrap {
		mode = "wrapped"
	}
	e.infof("%s: %d files (%d hard links), %d directories, %s %s from %d tar shards into %d shards\n",
		dst, st.Files, st.Hardlinks, st.Dirs, humanBytes(st.Bytes), mode, len(shards), st.Shards)
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

func convertTBLToBarecat(ctx context.Context, e *env, fl convertFlags, src, dst string, shardSize int64) error {
	if fl.wrap || fl.crc || fl.onDuplicate != "" || fl.lz4 || fl.compat != "" || fl.noNames {
		return usagef("--wrap, --crc, --on-duplicate, --lz4, --compat and --no-names do not apply to TBL -> Barecat")
	}
	r, err := tbl.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	var total int64
	if st, err := os.Stat(src); err == nil {
		total = st.Size()
	}
	bar := e.newProgress("barecat", total).of("samples")
	st, err := convert.ToBarecat(ctx, &convert.TBLSource{Reader: r}, dst, convert.BarecatOptions{
		ShardSize: shardSize, Workers: fl.workers, Overwrite: fl.force,
		Progress: func(p convert.Progress) { bar.update("barecat", p) },
	})
	bar.done()
	if err != nil {
		return err
	}
	e.infof("%s: %d files, %s from %d TBL samples into %d shards\n", dst, st.Files, humanBytes(st.Bytes), r.Len(), st.Shards)
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

func convertBarecatToTar(ctx context.Context, e *env, fl convertFlags, src, dstDir string, shardSize int64) error {
	if fl.reuseTars {
		return convertReuseTars(ctx, e, fl, src, dstDir)
	}
	if fl.wrap || fl.crc || fl.onDuplicate != "" {
		return usagef("--wrap, --crc and --on-duplicate apply to converting tar shards to Barecat")
	}
	order := barecat.ByPath
	switch fl.order {
	case "path":
	case "address":
		order = barecat.ByAddress
	default:
		return usagef("--order: %q is neither path nor address", fl.order)
	}
	fold := fl.fold
	if fold == "" {
		fold = "train"
	}
	a, err := barecat.Open(src)
	if err != nil {
		return err
	}
	defer a.Close()
	for _, w := range a.Warnings() {
		e.warnf("%s\n", w)
	}
	var total int64
	for _, n := range a.ShardSizes() {
		total += n
	}
	bar := e.newProgress(fold, total).of("files")
	st, err := convert.WriteFold(ctx, &convert.BarecatSource{Archive: a, Order: order}, convert.FoldOptions{
		Dir: dstDir, Fold: fold, ShardSize: shardSize, Workers: 1, Replace: fl.force,
		Progress: func(p convert.Progress) { bar.update(fold, p) },
	})
	bar.done()
	if err != nil {
		return err
	}
	e.infof("%s: %d members, %s into %d shards of fold %s in %s; index %s (%d rows)\n",
		src, st.Members, humanBytes(st.Bytes), len(st.Shards), fold, dstDir, filepath.Base(st.Index.Output), st.Index.Rows)
	e.warnNotIndexed(src, st.Index)
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

func convertToTBL(ctx context.Context, e *env, fl convertFlags, srcs []string, dst string) error {
	if fl.tblVersion != 1 && fl.tblVersion != 2 {
		return usagef("--tbl-version: %d (1 or 2)", fl.tblVersion)
	}
	if fl.tblVersion == 1 && (fl.lz4 || fl.compat != "") {
		return usagef("--lz4 and --compat turboloader need --tbl-version 2")
	}
	if fl.wrap || fl.crc || fl.onDuplicate != "" || fl.shardSize != "" {
		return usagef("--wrap, --crc, --on-duplicate and --shard-size do not apply to writing TBL")
	}
	opts := convert.TBLOptions{
		Version: fl.tblVersion, LZ4: fl.lz4, NoNames: fl.noNames, CompatTurboLoader: fl.compat == "turboloader",
		Workers: fl.workers, Scan: tarscan.Options{IgnoreZeros: fl.ignoreZeros},
	}
	var shards []string
	var st *convert.TBLStats
	var err error
	switch fl.from {
	case "scdl":
		if fl.compat != "" {
			return usagef("--compat turboloader reproduces TurboLoader's converter of tar shards, not of SCDL")
		}
		if err := checkSCDLMode(fl); err != nil {
			return err
		}
		if fl.cellsPerShard != 0 || fl.fold != "" {
			return usagef("--cells-per-shard and --fold apply to tar shards")
		}
		a, err := scdl.Open(srcs[0])
		if err != nil {
			return err
		}
		defer a.Close()
		bar := e.newProgress("tbl", scdlSize(a)).of("files")
		opts.Progress = func(p convert.Progress) { bar.update("tbl", p) }
		st, err = convert.ToTBL(ctx, func(bool) (convert.PayloadSource, error) {
			return convert.NewSCDLSource(a, fl.scdlMode)
		}, dst, opts)
		bar.done()
		if err != nil {
			return err
		}
		shards = srcs[:1]
	case "barecat":
		if fl.compat != "" {
			return usagef("--compat turboloader reproduces TurboLoader's converter of tar shards, not of Barecat")
		}
		a, err := barecat.Open(srcs[0])
		if err != nil {
			return err
		}
		defer a.Close()
		var total int64
		for _, n := range a.ShardSizes() {
			total += n
		}
		bar := e.newProgress("tbl", total).of("files")
		opts.Progress = func(p convert.Progress) { bar.update("tbl", p) }
		st, err = convert.ToTBL(ctx, func(counting bool) (convert.PayloadSource, error) {
			// The order files were added in: the dataset's order. The
			// counting pass reads the index alone.
			return &convert.BarecatSource{Archive: a, Order: barecat.ByAddress, NoData: counting}, nil
		}, dst, opts)
		bar.done()
		if err != nil {
			return err
		}
		shards = a.ShardPaths()
	default:
		if shards, _, err = tarSources(srcs, fl.fold); err != nil {
			return err
		}
		bar := e.newProgress("tbl", totalSize(shards))
		opts.Progress = func(p convert.Progress) { bar.update("tbl", p) }
		st, err = convert.TarToTBL(ctx, shards, dst, opts)
		bar.done()
	}
	if err != nil {
		return err
	}
	if !st.NamesKept {
		e.warnf("%s: member names are not stored (TBL v1 has no place for them; v2 keeps them unless --no-names or --compat): converting back names samples by their index\n", dst)
	}
	var skipped []string
	for k, n := range st.Skipped {
		skipped = append(skipped, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(skipped)
	extra := ""
	if len(skipped) > 0 {
		extra = " (not converted: " + strings.Join(skipped, ", ") + ")"
	}
	what := "shards"
	if fl.from == "scdl" {
		what = "archive"
	}
	e.infof("%s: TBL v%d, %d samples, %s from %d %s %s%s\n", dst, st.Version, st.Samples, humanBytes(st.Bytes), len(shards), label(fl.from), what, extra)
	if st.MetaDropped > 0 {
		e.warnf("%s: the metadata of %d samples (their .tblmeta.json members) is not kept: this TBL has no metadata section\n", dst, st.MetaDropped)
	}
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}

func convertTBLToTar(ctx context.Context, e *env, fl convertFlags, src, dstDir string, shardSize int64) error {
	if fl.wrap || fl.crc || fl.onDuplicate != "" || fl.lz4 || fl.compat != "" || fl.noNames {
		return usagef("--wrap, --crc, --on-duplicate, --lz4, --compat and --no-names do not apply to reading TBL")
	}
	r, err := tbl.Open(src)
	if err != nil {
		return err
	}
	defer r.Close()
	fold := fl.fold
	if fold == "" {
		fold = "train"
	}
	st0, _ := os.Stat(src)
	var total int64
	if st0 != nil {
		total = st0.Size()
	}
	bar := e.newProgress(fold, total).of("samples")
	tsrc := &convert.TBLSource{Reader: r}
	st, err := convert.WriteFold(ctx, tsrc, convert.FoldOptions{
		Dir: dstDir, Fold: fold, ShardSize: shardSize, Workers: fl.workers, Replace: fl.force,
		Progress: func(p convert.Progress) { bar.update(fold, p) },
	})
	bar.done()
	if err != nil {
		return err
	}
	e.infof("%s: %d samples -> %d members, %s into %d shards of fold %s in %s; index %s (%d rows)\n",
		src, r.Len(), st.Members, humanBytes(st.Bytes), len(st.Shards), fold, dstDir, filepath.Base(st.Index.Output), st.Index.Rows)
	if n, first := tsrc.BadJSON(); n > 0 {
		e.warnf("%s: %d samples have a JSON-typed metadata block that does not parse (first: sample %v): kept as they are, not used as names\n", src, n, first)
	}
	if r.Version() == 2 && !r.HasMetadata() {
		e.infof("%s has no metadata section: convert back with --no-names for an identical file\n", src)
	}
	if fl.jsonOut {
		return e.printJSON(st)
	}
	return nil
}
