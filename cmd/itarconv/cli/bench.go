package cli

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/formatcompare"
)

type benchFlags struct {
	out, fold, workDir, formats, corrupt string
	minSize, maxSize                     string
	synthetic, shards                    int
	reads, coldReads, reps, workers      int
	seed                                 int64
	keep, noCold, jsonOut                bool
}

func newBenchCmd(e *env) *cobra.Command {
	var fl benchFlags
	cmd := &cobra.Command{
		Use:   "bench [--out DIR] SRC | bench --synthetic N [--out DIR]",
		Short: "Compare the formats on your own data: size, build time, random and sequential reads",
		Long: `Bench converts a fold of tar shards (SRC: a directory of <fold>_<suffix>.tar
shards, one fold or --fold, or tar files) into every format itarconv writes —
the tar fold with its TARIDX, Barecat (copied, and --wrap), TBL v1, v2 and v2
with LZ4 — and measures them side by side in one run: build time, bytes on
disk (data and index) and overhead over the raw payload, index open time,
random reads of one seeded list of samples (--reads, the same list for every
format; p50, p99 and max latency) and a sequential read of every sample.

Each format is read as its own loader reads it: tar + TARIDX with the shards
kept open and one positioned read at the header's offset + 512; Barecat with
a lookup in its SQLite index and a positioned read from its shard, kept open;
TBL with a copy out of the mapped file (LZ4 decoded). The reads do no checking
of their own: every read is checked against an xxh64 of the source's bytes,
the same for every format, and that check is timed apart ("check µs"), as is
the format's own check ("own check µs": tar's header checksum, Barecat's
crc32c, TBL v2's CRC-16). A format that returns wrong bytes fails the run
(exit 1), naming it.

Cold reads (--cold-reads distinct samples per repetition) drop the files'
pages first (posix_fadvise DONTNEED, checked with mincore), open the format
after, and check before each read that its pages are not resident: reads
that find them read ahead are not timed, and the table says how many were.
Where the machine keeps the pages (tmpfs, no permission), there is no cold
column and the report says why.

The default run answers within about 10 s on small data (on 2 cores: 3,000
members of 1-32 KiB, 2-3 s; 20,000 members, 323 MiB, about 9 s). What grows
with the data is every format's build (--reps times) and the sequential
passes: budget about 25 s a GiB of payload, more on a slow disk. Random reads
are a fixed count (--reads, --cold-reads). Timings are repeated (--reps)
after a warm-up; medians are reported with their spread.

--synthetic N generates N members (pairs of .jpg and .cls) with payload
sizes uniform in [--min-size, --max-size], deterministically, instead of
reading SRC. The table goes to stdout; with --out, DIR gets report.json,
report.md and SVG charts. Conversions go to a temporary directory (in DIR
with --out, else the system's; --work-dir chooses) removed unless --keep.`,
		Args: argsBetween(0, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.jsonOut = e.jsonOut // the report as JSON instead of the table
			return runBench(cmd, e, fl, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.out, "out", "", "write report.json, report.md and the charts into this directory")
	f.StringVar(&fl.fold, "fold", "", "fold to read from SRC's directory")
	f.IntVar(&fl.synthetic, "synthetic", 0, "generate this many members instead of reading SRC")
	f.StringVar(&fl.minSize, "min-size", "1KiB", "synthetic: smallest payload")
	f.StringVar(&fl.maxSize, "max-size", "32KiB", "synthetic: largest payload (sizes are uniform in between)")
	f.IntVar(&fl.shards, "shards", 4, "synthetic: number of tar shards")
	f.IntVar(&fl.reads, "reads", formatcompare.DefaultReads, "random reads per repetition")
	f.IntVar(&fl.coldReads, "cold-reads", formatcompare.DefaultColdReads, "distinct samples read cold per repetition (each a block I/O)")
	f.IntVar(&fl.reps, "reps", 3, "repetitions of every timing (the median is reported)")
	f.Int64Var(&fl.seed, "seed", 1, "seed of the random read list")
	f.StringVar(&fl.formats, "formats", strings.Join(formatcompare.DefaultFormats(), ","), "formats to compare")
	f.StringVar(&fl.workDir, "work-dir", "", "directory for the conversions (default: in --out, else the system's temporary directory)")
	f.BoolVar(&fl.keep, "keep", false, "keep the conversions (and the synthetic source)")
	f.BoolVar(&fl.noCold, "no-cold", false, "skip the cold-cache random reads")
	f.IntVar(&fl.workers, "workers", defaultWorkers(), "conversion workers")
	f.StringVar(&fl.corrupt, "corrupt", "", "flip a byte of this format's data after building it (to test the read check)")
	f.MarkHidden("corrupt")
	return cmd
}

func runBench(cmd *cobra.Command, e *env, fl benchFlags, args []string) error {
	opts, err := benchOptions(fl, args)
	if err != nil {
		return err
	}
	opts.Command = commandLine(cmd, args)
	work, err := benchWorkDir(e, fl)
	if err != nil {
		return err
	}
	opts.WorkDir = work
	if !fl.keep {
		defer os.RemoveAll(work)
	}
	if !e.quiet && isTerminal(e.stderr) {
		opts.Progress = benchProgress(e)
	}

	rep, runErr := formatcompare.Run(cmd.Context(), opts)
	if rep == nil {
		return runErr
	}
	if err := writeBenchReport(e, fl, rep); err != nil {
		return err
	}
	if errors.Is(runErr, formatcompare.ErrFailed) {
		return fmt.Errorf("bench: %w", runErr)
	}
	return runErr
}

// benchOptions checks the flags and arguments and turns them into the
// engine's options: the formats, and a synthetic dataset or tar shards
// whose report files may not overwrite a shard.
func benchOptions(fl benchFlags, args []string) (formatcompare.Options, error) {
	opts := formatcompare.Options{Reads: fl.reads, ColdReads: fl.coldReads, Reps: fl.reps, Seed: fl.seed, Workers: fl.workers,
		NoCold: fl.noCold, Keep: fl.keep, Corrupt: fl.corrupt}
	switch {
	case fl.reads < 1 || fl.coldReads < 1 || fl.reps < 1 || fl.workers < 1:
		return opts, usagef("--reads, --cold-reads, --reps and --workers must be at least 1")
	case fl.synthetic > 0 && len(args) > 0:
		return opts, usagef("bench: give SRC or --synthetic N, not both")
	case fl.synthetic == 0 && len(args) == 0:
		return opts, usagef("bench: give SRC (a directory of tar shards, or tar files) or --synthetic N")
	case fl.synthetic < 0 || fl.synthetic == 1:
		return opts, usagef("--synthetic: want at least 2 members")
	}
	formats, err := benchFormats(fl.formats)
	if err != nil {
		return opts, err
	}
	opts.Formats = formats
	if fl.synthetic > 0 {
		opts.Synthetic, err = benchSynthetic(fl)
		return opts, err
	}
	shards, fold, err := tarSources(args, fl.fold)
	if err != nil {
		return opts, err
	}
	opts.Shards, opts.Fold = shards, fold
	in := &pathguard.Inputs{}
	if err := guardShards(in, shards, nil, len(args) > 1); err != nil {
		return opts, err
	}
	if fl.out != "" {
		var outs []string
		for _, name := range []string{"report.json", "report.md", "size.svg", "latency.svg", "sequential.svg", "build.svg"} {
			outs = append(outs, filepath.Join(fl.out, name))
		}
		if err := guardErr(in.CheckOutputs(outs...)); err != nil {
			return opts, err
		}
	}
	return opts, nil
}

// benchFormats is --formats as a list, blanks skipped; an unknown name is
// a usage error that lists the known ones.
func benchFormats(list string) ([]string, error) {
	var formats []string
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if formatcompare.Label(name) == name {
			return nil, usagef("--formats: unknown format %q (%s)", name, strings.Join(formatcompare.DefaultFormats(), ", "))
		}
		formats = append(formats, name)
	}
	return formats, nil
}

// benchSynthetic is the synthetic dataset the flags describe.
func benchSynthetic(fl benchFlags) (*formatcompare.Synthetic, error) {
	lo, err := parseSizeOrZero(fl.minSize)
	if err != nil {
		return nil, usageError{fmt.Errorf("--min-size: %w", err)}
	}
	hi, err := parseSizeOrZero(fl.maxSize)
	if err != nil {
		return nil, usageError{fmt.Errorf("--max-size: %w", err)}
	}
	if hi < lo || fl.shards < 1 {
		return nil, usagef("--max-size must be at least --min-size, --shards at least 1")
	}
	return &formatcompare.Synthetic{Samples: fl.synthetic, Shards: fl.shards, MinSize: int(lo), MaxSize: int(hi), Seed: 1}, nil
}

// benchWorkDir makes the conversions' directory, which the caller removes
// unless --keep.
func benchWorkDir(e *env, fl benchFlags) (string, error) {
	parent := fl.workDir
	if parent == "" && fl.out != "" {
		parent = fl.out
	}
	if parent != "" {
		if err := os.MkdirAll(parent, 0o755); err != nil {
			return "", err
		}
	}
	// Unless kept, the work directory carries the process id, so that the
	// next run removes what a killed one left (gigabytes of conversions).
	pattern := safefile.TempName("bench")
	if fl.keep {
		pattern = "itarconv-bench-"
	} else {
		safefile.SweepLeftovers(cmp.Or(parent, os.TempDir()))
	}
	work, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", err
	}
	if fl.keep {
		e.infof("conversions kept in %s\n", work)
	}
	return work, nil
}

// benchProgress is a progress bar on standard error, made at the first
// step, when the total is known.
func benchProgress(e *env) func(step string, done, total int) {
	var bar *progressbar.ProgressBar
	return func(step string, done, total int) {
		if bar == nil {
			bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(e.stderr),
				progressbar.OptionSetWidth(30), progressbar.OptionThrottle(100*time.Millisecond),
				progressbar.OptionClearOnFinish())
		}
		bar.Describe("bench: " + step)
		bar.Set(done)
		if done == total {
			bar.Finish()
		}
	}
}

// writeBenchReport writes the report's files under --out, then prints it
// as JSON or as the table.
func writeBenchReport(e *env, fl benchFlags, rep *formatcompare.Report) error {
	if fl.out != "" {
		if err := rep.WriteFiles(fl.out); err != nil {
			return err
		}
	}
	if fl.jsonOut {
		if err := e.setResult(rep); err != nil {
			return err
		}
	} else if err := rep.WriteTable(e.stdout); err != nil {
		return err
	}
	if fl.out != "" {
		e.infof("report: %s/report.md, report.json and 4 charts\n", fl.out)
	}
	return nil
}

// parseSizeOrZero is parseSize that also takes 0.
func parseSizeOrZero(s string) (int64, error) {
	if strings.TrimSpace(s) == "0" {
		return 0, nil
	}
	return parseSize(s)
}

// commandLine rebuilds the command as typed, for the report.
func commandLine(cmd *cobra.Command, args []string) string {
	parts := []string{cmd.CommandPath()}
	for _, name := range []string{"synthetic", "min-size", "max-size", "shards", "fold", "reads", "cold-reads", "reps", "seed",
		"formats", "workers", "no-cold", "keep", "out", "work-dir"} {
		if !cmd.Flags().Changed(name) {
			continue
		}
		v := cmd.Flags().Lookup(name).Value
		if v.Type() == "bool" {
			parts = append(parts, "--"+name)
		} else {
			parts = append(parts, "--"+name+" "+v.String())
		}
	}
	return strings.Join(append(parts, args...), " ")
}
