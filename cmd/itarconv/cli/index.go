package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/itarconv/itarconv/dataset"
	"github.com/itarconv/itarconv/internal/pathguard"
	"github.com/itarconv/itarconv/internal/safefile"
	"github.com/itarconv/itarconv/remote"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/fold"
	"github.com/itarconv/itarconv/formats/tarfile"
	"github.com/itarconv/itarconv/formats/taridx"
	"github.com/itarconv/itarconv/loaders"
	_ "github.com/itarconv/itarconv/loaders/all" // every loader's plug-in
	"github.com/itarconv/itarconv/partition"
	"github.com/itarconv/itarconv/shardset"
)

type indexFlags struct {
	// memory is --memory, the budget of the index and the loaders' joins.
	memory                             int64
	fold, output, outDir, compat, stem string
	strategy, formats                  string
	contiguous, ignoreZeros, json      bool
	widsMD5                            bool
	splits                             loaders.Splits // --split FOLD=PART
	workers                            int
	taskFlags
	cmd *cobra.Command // for the flags the user set
}

func newIndexCmd(e *env) *cobra.Command {
	var fl indexFlags
	cmd := &cobra.Command{
		Use:   "index DIR | index SHARDS... [-o OUT.taridx]",
		Short: "Build the TARIDX index of each fold of tar shards, and other loaders' indexes",
		Long: `Index builds one <fold>.taridx next to the shards of each fold in DIR, or
one index of the shards given.

In DIR, shards named <fold>_<suffix>.tar (exactly one "_", glzn's naming) are
taken in string order of their suffixes; other names are grouped by the prefix
before a trailing number (imagenet-train-000000.tar: fold imagenet-train),
in order of the number. A shard's fid is its position in that order.

Shards may also be given as files, a brace pattern such as
'data/train-{000000..000146}.tar', a glob such as 'data/*.tar', or @FILE
(one shard a line), in that order. The index is then named by -o, or after
the shards' fold (beside the first, or in --out-dir). An index of shards
glzn would not find beside it gets a manifest, <index>.shards.json, naming
them: ls, cat, verify and convert then need the index only. Compressed
shards cannot be indexed in place: convert makes an indexed fold of them.

Rows are the regular files of the shards, in tar order, each with its
sample's key (the basename before its first dot; --stem path keeps the
directory, as WebDataset keys samples) and the lowercased rest as extension. Members without an
extension, or with white space in it, are skipped with a warning: glzn's
loader cannot read them. --compat glzn reproduces glzn's own indexer
instead: every header block is a row, named by its 100-byte name field.

--format also writes, from the same pass over the headers, the indexes other
loaders read, each where its loader looks for it (or in --out-dir, under the
same name), as the loader's own tool writes it: energon (<shard>.tar.idx
beside each shard and .nv-meta/ beside the shards, each fold in the split
part its name tells, train, val (or validation) or test, as energon prepare
--split-parts writes it; --split FOLD=PART where the names do not tell),
wids (shardindex.json beside the shards, or <fold>.shardindex.json for each
of several folds, as widsindex create), dali (<shard>.idx, as wds2idx) and ratarmount
(<shard>.index.sqlite); all is every one of them and TARIDX. verify checks
any of these files against its shards.`,
		Args: argsBetween(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.cmd = cmd
			fl.json = e.jsonOut
			return runIndex(cmd.Context(), e, fl, args)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.fold, "fold", "", "index only this fold of DIR")
	f.StringVarP(&fl.output, "output", "o", "", "index file to write, for a list of shards (default: <fold>.taridx beside the first)")
	f.StringVar(&fl.outDir, "out-dir", "", "write the <fold>.taridx files here instead of next to the shards")
	f.StringVar(&fl.compat, "compat", "", `"glzn": reproduce glzn's indexer byte for byte`)
	f.StringVar(&fl.stem, "stem", "basename", `"basename" or "path" (keep the directory in the key, as WebDataset)`)
	f.BoolVar(&fl.contiguous, "contiguous", false, "group each sample's rows (stable sort by key hash, crash id) and set the flag")
	f.IntVar(&fl.workers, "workers", defaultWorkers(), "shards scanned in parallel")
	f.BoolVar(&fl.ignoreZeros, "ignore-zeros", false, "read past zero blocks (concatenated archives)")
	f.StringVar(&fl.formats, "format", taridx.FormatName, formatHelp())
	f.BoolVar(&fl.widsMD5, "wids-md5", false, "record each shard's MD5 sum in wids' index (reads every shard whole; the loader then checks it)")
	f.Var(&fl.splits, "split", `the energon split part (train, val or test) of a fold of DIR, such as imagenet-val=val, where its name does not tell it; repeatable; '*=PART' for every fold not named`)
	fl.taskFlags.add(cmd)
	f.StringVar(&fl.strategy, "read-strategy", "auto", `how headers are read: "auto" (per read, "pread" where members are large, "sequential" where they are small), "pread" (one read per header), "sequential" (large reads through the shard) or "mmap" (the shard mapped)`)
	return cmd
}

// indexJob is one index to build.
type indexJob struct {
	fold   string
	shards []string
	out    string
	infos  []fs.FileInfo // the shards' stats where planIndex made them, else nil
}

func planIndex(ctx context.Context, e *env, fl indexFlags, args []string) ([]indexJob, error) {
	if len(args) == 1 {
		if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
			return planIndexDir(fl, args[0])
		}
	}
	if fl.fold != "" {
		return nil, usagef("--fold selects a fold of a directory; it does not apply to a list of shards")
	}
	if fl.output != "" && fl.outDir != "" {
		return nil, usagef("-o names the index; --out-dir is where it goes when its name comes from the shards: give one")
	}
	shards, lstats, err := resolveIndexShards(ctx, e, fl, args)
	if err != nil {
		return nil, err
	}
	infos := make([]fs.FileInfo, len(shards))
	for i, a := range shards {
		if remote.IsURL(a) {
			continue // checked when opened
		}
		st, err := shardset.StatResolved(a, lstats[i])
		if err != nil {
			return nil, err
		} else if st.IsDir() {
			return nil, usagef("%s is a directory: give one directory, or shard files", a)
		}
		infos[i] = st
	}
	if fl.compat == "glzn" {
		if err := glznNames(shards); err != nil {
			return nil, err
		}
	}
	out := fl.output
	name := strings.TrimSuffix(filepath.Base(out), ".taridx")
	if out == "" {
		if name = shardset.FoldName(shards); name == "" {
			return nil, usagef("the shards' names give no one fold name: name the index with -o OUT.taridx")
		}
		dir := filepath.Dir(shards[0])
		if remote.IsURL(shards[0]) && fl.outDir == "" {
			return nil, usagef("the shards are remote and the index is written here: name it with -o OUT.taridx, or give --out-dir")
		}
		if fl.outDir != "" {
			dir = fl.outDir
		}
		out = filepath.Join(dir, name+".taridx")
	}
	return []indexJob{{fold: name, shards: shards, out: out, infos: infos}}, nil
}

// formatHelp is --format's help: TARIDX and every registered loader.
func formatHelp() string {
	parts := []string{taridx.FormatName}
	for _, name := range loaders.Names() {
		p := loaders.Lookup(name)
		parts = append(parts, fmt.Sprintf("%s (%s)", name, p.Help))
	}
	return "indexes to write, a comma-separated list of: " + strings.Join(parts, ", ") + ", or all"
}

// indexFormats reads --format: the loaders' indexes to write besides (or
// instead of) TARIDX (nil: none), and whether to write TARIDX.
func indexFormats(fl indexFlags, opts *fold.IndexOptions) (set *loaders.Set, withTARIDX bool, err error) {
	names := loaders.Names() // always in this order
	want := map[string]bool{}
	for _, f := range strings.Split(fl.formats, ",") {
		f = strings.TrimSpace(f)
		switch {
		case f == taridx.FormatName:
			withTARIDX = true
		case f == "all":
			withTARIDX = true
			for _, name := range names {
				want[name] = true
			}
		case slices.Contains(names, f):
			want[f] = true
		default:
			return nil, false, usagef("--format: %q is none of taridx, %s, all", f, strings.Join(names, ", "))
		}
	}
	var kinds []loaders.Loader
	for _, name := range names {
		if want[name] {
			l, err := loaders.New(name, loaders.Options{OutDir: fl.outDir, MD5: fl.widsMD5, Memory: fl.memory, Workers: fl.workers})
			if err != nil {
				return nil, false, err
			}
			kinds = append(kinds, l)
		}
	}
	if len(kinds) > 0 {
		if opts.CompatGLZN {
			return nil, false, usagef("--compat glzn reads header blocks; the other loaders' indexes read members: index them apart")
		}
		set = loaders.NewSet(kinds...)
		set.SetSplits(fl.splits)
		opts.Loaders = set
	}
	return set, withTARIDX, nil
}

// planIndexDir plans an index for each fold of a directory's shards.
func planIndexDir(fl indexFlags, dir string) ([]indexJob, error) {
	if fl.output != "" {
		return nil, usagef("-o is for a list of shards; for a directory, --out-dir chooses where the indexes go")
	}
	outDir := dir
	if fl.outDir != "" {
		outDir = fl.outDir
	}
	folds, err := shardset.Discover(dir)
	if fl.compat == "glzn" {
		folds, err = glznFolds(dir)
	}
	if err != nil {
		return nil, err
	}
	var jobs []indexJob
	for _, f := range folds {
		if fl.fold == "" || f.Name == fl.fold {
			jobs = append(jobs, indexJob{fold: f.Name, shards: f.Shards, out: f.IndexPath(outDir)})
		}
	}
	if len(jobs) == 0 {
		if fl.fold != "" {
			return nil, fmt.Errorf("%s: no shards of fold %q", dir, fl.fold)
		}
		return nil, fmt.Errorf("%s: no tar shards (files ending in .tar)", dir)
	}
	return jobs, nil
}

// glznFolds groups a directory's shards as glzn's iTarDirectory does,
// refusing, as it does, a directory with a ".tar" not named
// <fold>_<suffix>.tar with exactly one "_": an index of it would be one
// glzn cannot load.
func glznFolds(dir string) ([]shardset.Fold, error) {
	folds, err := taridx.Discover(dir)
	if err != nil {
		return nil, fmt.Errorf("%w; glzn refuses the directory (\"Invalid delimiter\"): without --compat glzn, itarconv indexes it with a manifest", err)
	}
	out := make([]shardset.Fold, len(folds))
	for i, f := range folds {
		out[i] = shardset.Fold{Name: f.Name, Shards: f.Shards}
	}
	return out, nil
}

// glznNames refuses, under --compat glzn, a shard whose name glzn refuses.
func glznNames(shards []string) error {
	for _, s := range shards {
		if remote.IsURL(s) {
			continue
		}
		if _, _, ok := taridx.SplitShardName(filepath.Base(s)); !ok {
			return fmt.Errorf("%s: %w (exactly one \"_\" is allowed); glzn refuses it (\"Invalid delimiter\"): without --compat glzn, itarconv indexes it with a manifest",
				s, taridx.ErrShardName)
		}
	}
	return nil
}

// resolveIndexShards resolves the shards an index is given; a task of a
// partitioned run named by -o takes what the run's first task found.
func resolveIndexShards(ctx context.Context, e *env, fl indexFlags, args []string) ([]string, []fs.FileInfo, error) {
	return resolveTaskShards(ctx, e, fl.taskFlags, args, fl.output, func() ([]string, []fs.FileInfo, error) {
		return shardset.ResolveInfo(ctx, args)
	})
}

// withConvertHint adds to the refusal of a compressed shard how to index
// it: no index can address the members of a compressed tar (its scan
// tells it by its first bytes, and refuses it, as for a URL; no shard is
// opened beforehand, which a run of 10^5 shards would pay in turn), and
// convert makes an indexed fold of plain tars of it.
func withConvertHint(err error, args []string, job indexJob) error {
	if !errors.Is(err, tarfile.ErrCompressed) {
		return err
	}
	return fmt.Errorf("%w; itarconv convert %s OUTDIR writes an indexed fold of uncompressed shards", err, convertHint(args, job))
}

// convertHint is the source of the convert command that makes an indexed
// fold of a job's shards: the arguments as given (a directory with the
// fold chosen when it holds several).
func convertHint(args []string, job indexJob) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = shellQuote(a)
	}
	hint := strings.Join(quoted, " ")
	if st, err := os.Stat(args[0]); err == nil && st.IsDir() && len(args) == 1 {
		hint = "--fold " + shellQuote(job.fold) + " " + hint
	}
	return hint
}

// shellQuote quotes a path for a command line the user may paste.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./+=:,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func runIndex(ctx context.Context, e *env, fl indexFlags, args []string) error {
	fl.memory = e.memory
	opts, set, withTARIDX, err := indexSetup(fl)
	if err != nil {
		return err
	}
	jobs, err := planIndex(ctx, e, fl, args)
	if err != nil {
		return err
	}
	if err := e.checkIndexPlaces(fl, jobs); err != nil {
		return err
	}
	task, partitioned, err := fl.taskFlags.resolve(e.getenv)
	if err != nil {
		return err
	}
	if partitioned && len(jobs) != 1 {
		return usagef("a partitioned run indexes one fold: %s holds %d (choose one with --fold)", args[0], len(jobs))
	}
	for _, job := range jobs {
		if remote.AnyURL(job.shards) && set != nil && fl.outDir == "" {
			return usagef("the shards are remote: the loaders' indexes (--format) that go beside each shard need --out-dir")
		}
		opts.Workers = max(opts.Workers, e.shardWorkers(fl.cmd, fl.workers, job.shards))
	}
	anchor := jobs[0].out // the output tasks and merge name the run by
	if !withTARIDX {
		for i := range jobs {
			jobs[i].out = ""
		}
	}
	mine, err := guardIndexJobs(ctx, args, jobs, set, partitioned, task)
	if err != nil {
		return err
	}
	// One rule for every command: the directories outputs go into are
	// made (parents too), and removed again when the run fails.
	created, err := makeOutputDirs(fl.outDir, filepath.Dir(jobs[0].out))
	if err != nil {
		return err
	}
	if partitioned {
		err = withConvertHint(e.indexTask(ctx, fl, opts, set, withTARIDX, jobs[0], anchor, task, mine.inputs, mine.lo, mine.hi), args, jobs[0])
	} else {
		err = e.buildIndexes(ctx, fl, opts, set, args, jobs)
	}
	if err != nil {
		safefile.RemoveCreated(created)
	}
	return err
}

// checkIndexPlaces refuses, before any shard is read, shard URLs that
// carry credentials.
func (e *env) checkIndexPlaces(fl indexFlags, jobs []indexJob) error {
	for _, job := range jobs {
		if err := e.storedURLs(job.shards); err != nil {
			return err
		}
	}
	return nil
}

// taskShards is what a partitioned task indexes: every shard of the run,
// stat'ed once, and its own range [lo, hi) of them.
type taskShards struct {
	inputs []partition.Input
	lo, hi int
}

// guardIndexJobs checks every job's shards and outputs (no output over an
// input, no compressed shard, no loader index over another) and plans the
// loaders' indexes. A partitioned task checks only its own shards, which it
// returns.
func guardIndexJobs(ctx context.Context, args []string, jobs []indexJob, set *loaders.Set, partitioned bool, task partition.Task) (taskShards, error) {
	st, err := os.Stat(args[0])
	explicit := len(args) > 1 || err != nil || !st.IsDir() // else found in a directory
	var t taskShards
	for _, job := range jobs {
		in := &pathguard.Inputs{}
		mine, infos := job.shards, job.infos
		if partitioned {
			// A task opens only its own shards: a run of thousands of
			// tasks must not have each read every shard's head.
			if t.inputs, err = partition.StatInputsKnown(ctx, job.shards, job.infos); err != nil {
				return t, err
			}
			t.lo, t.hi = partition.Range(inputSizes(t.inputs), task)
			mine = job.shards[t.lo:t.hi]
			if infos != nil {
				infos = infos[t.lo:t.hi]
			}
		}
		if err := guardShards(in, mine, infos, explicit); err != nil {
			return t, err
		}
		if set != nil {
			set.PlanFold(job.fold, mine)
		}
		if err := guardErr(in.CheckOutputs(job.out)); err != nil {
			return t, err
		}
		if err := checkLoaderOutputs(in, set); err != nil {
			return t, err
		}
	}
	return t, nil
}

// buildIndexes is a single run: each fold's index in turn, then the
// loaders' indexes, reported as text or as one JSON object.
func (e *env) buildIndexes(ctx context.Context, fl indexFlags, opts fold.IndexOptions, set *loaders.Set, args []string, jobs []indexJob) error {
	var results []indexResult
	for _, job := range jobs {
		bar := e.newShardProgress(job.fold, job.shards, knownSizes(job.infos), true)
		opts.Progress = func(p dataset.Progress) { bar.update(job.fold, p) }
		opts.ShardSizes = knownSizes(job.infos)
		st, err := fold.BuildIndex(ctx, job.shards, job.out, opts)
		bar.done(err)
		if err != nil {
			return withConvertHint(fmt.Errorf("indexing fold %s: %w", job.fold, err), args, job)
		}
		res := newIndexResult(job.fold, st)
		results = append(results, res)
		e.reportIndex(res)
	}
	var loaderStats *loaders.Stats
	if set != nil {
		var err error
		loaderStats, err = set.Finish(ctx)
		e.reportLoaders(loaderStats)
		if err != nil {
			return err
		}
	}
	if fl.json {
		out := map[string]any{"folds": results}
		if loaderStats != nil {
			out["loaders"] = loaderStats
		}
		return e.setResult(out)
	}
	return nil
}

// indexSetup reads the flags that shape the index (and the loaders', set
// also as opts.Loaders), as a run and a merge both need them.
func indexSetup(fl indexFlags) (opts fold.IndexOptions, set *loaders.Set, withTARIDX bool, err error) {
	opts = fold.IndexOptions{Contiguous: fl.contiguous, Workers: fl.workers, Memory: fl.memory}
	switch fl.compat {
	case "":
	case "glzn":
		opts.CompatGLZN = true
	default:
		return opts, nil, false, usagef("--compat: unknown implementation %q (glzn)", fl.compat)
	}
	switch fl.stem {
	case "basename":
	case "path":
		opts.Stem = taridx.StemPath
		if opts.CompatGLZN {
			return opts, nil, false, usagef("--stem path does not apply to --compat glzn (glzn keys basenames)")
		}
	default:
		return opts, nil, false, usagef("--stem: %q is neither basename nor path", fl.stem)
	}
	if fl.workers < 1 {
		return opts, nil, false, usagef("--workers must be at least 1")
	}
	strategy, err := tarfile.ParseStrategy(fl.strategy)
	if err != nil {
		return opts, nil, false, usageError{err}
	}
	opts.Scan = tarfile.Options{IgnoreZeros: fl.ignoreZeros, Strategy: strategy}
	set, withTARIDX, err = indexFormats(fl, &opts)
	return opts, set, withTARIDX, err
}

// checkLoaderOutputs refuses loaders' index files that would overwrite a
// shard or each other.
func checkLoaderOutputs(in *pathguard.Inputs, l *loaders.Set) error {
	if l == nil {
		return nil
	}
	outs, err := l.Outputs()
	if err != nil {
		return usageError{err}
	}
	return guardErr(in.CheckOutputs(outs...))
}

// reportLoaders says how many index files each loader got, and which
// shards a loader indexes not.
func (e *env) reportLoaders(st *loaders.Stats) {
	if st == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(st.Written)) {
		n := st.Written[name]
		e.infof("%s: %d index %s\n", name, n, plural(n, "file", "files"))
	}
	for _, name := range slices.Sorted(maps.Keys(st.None)) {
		e.warnf("%s: %d shards without a %s index (%s indexes no such shard), e.g. %s\n",
			name, len(st.None[name]), name, name, st.None[name][0])
	}
}

// indexResult is the JSON form of an index build.
type indexResult struct {
	Fold          string           `json:"fold"`
	Output        string           `json:"output"`
	Shards        int              `json:"shards"`
	Members       int64            `json:"members"`
	Rows          uint64           `json:"rows"`
	Stems         uint64           `json:"stems"`
	Extensions    []string         `json:"extensions"`
	CrashStems    int              `json:"crash_stems"`
	Contiguous    bool             `json:"contiguous"`
	PayloadBytes  int64            `json:"payload_bytes"`
	NotRegular    map[string]int64 `json:"not_regular"`
	NoExtension   int64            `json:"skipped_no_extension"`
	SpaceInExt    int64            `json:"skipped_space_in_extension"`
	Sparse        int64            `json:"skipped_sparse"`
	SkippedNames  []string         `json:"skipped_examples"`
	SparseNames   []string         `json:"sparse_examples"`
	HardlinkNames []string         `json:"hardlink_examples"`
	Seconds       float64          `json:"seconds"`
	MembersPerSec float64          `json:"members_per_second"`
	ReadCalls     int64            `json:"read_calls"`
	ReadBytes     int64            `json:"read_bytes"`
}

func newIndexResult(fold string, st *fold.IndexStats) indexResult {
	exts := st.Exts
	if exts == nil {
		exts = []string{}
	}
	return indexResult{
		Fold: fold, Output: st.Output, Shards: st.Shards, Members: st.Members,
		Rows: st.Rows, Stems: st.Stems, Extensions: exts, CrashStems: st.Crash,
		Contiguous: st.Contiguous, PayloadBytes: st.Bytes, NotRegular: st.NotRegular,
		NoExtension: st.NoExt, SpaceInExt: st.SpaceInExt, Sparse: st.Sparse,
		SkippedNames: st.SkippedNames, SparseNames: st.SparseNames, HardlinkNames: st.HardlinkNames,
		Seconds: st.Elapsed.Seconds(), MembersPerSec: st.MembersPerSec,
		ReadCalls: st.Reads, ReadBytes: st.ReadBytes,
	}
}

func (e *env) reportIndex(r indexResult) {
	if r.Output == "" {
		return // no TARIDX
	}
	if n := r.NoExtension + r.SpaceInExt; n > 0 {
		e.warnf("%s: %d members skipped (%d without an extension, %d with white space in it; glzn's loader cannot read them), e.g. %s\n",
			r.Fold, n, r.NoExtension, r.SpaceInExt, quoteList(r.SkippedNames))
	}
	if n := r.NotRegular["hardlink"]; n > 0 {
		e.warnf("%s: %d hard links not indexed (a hard link has no payload of its own; its bytes are at the member it names), e.g. %s\n",
			r.Fold, n, quoteList(r.HardlinkNames))
	}
	if r.Sparse > 0 {
		e.warnf("%s: %d sparse members skipped (their payload is not the file's bytes), e.g. %s\n", r.Fold, r.Sparse, quoteList(r.SparseNames))
	}
	var other []string
	for k, n := range r.NotRegular {
		other = append(other, fmt.Sprintf("%d %s", n, k))
	}
	sort.Strings(other)
	extra := ""
	if len(other) > 0 {
		extra = " (not indexed: " + strings.Join(other, ", ") + ")"
	}
	members := fmt.Sprintf("%d members", r.Rows)
	if int64(r.Rows) != r.Members {
		members = fmt.Sprintf("%d of %d members", r.Rows, r.Members)
	}
	e.infof("%s: %s (%s, %s) from %s%s in %.3fs (%s members/s) -> %s\n",
		r.Fold, members, counted(int(r.Stems), "sample", "samples"), counted(len(r.Extensions), "extension", "extensions"),
		counted(r.Shards, "shard", "shards"), extra, r.Seconds, humanRate(r.MembersPerSec), r.Output)
}

func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

func humanRate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

// plural is one or many, as n says.
// counted is n and the word for n of them: "1 shard", "2 shards".
func counted(n int, one, many string) string { return fmt.Sprintf("%d %s", n, plural(n, one, many)) }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// inputSizes are the sizes of a run's inputs, as its tasks saw them.
func inputSizes(inputs []partition.Input) []int64 {
	sizes := make([]int64, len(inputs))
	for i, in := range inputs {
		sizes[i] = in.Size
	}
	return sizes
}

// knownSizes are the shards' sizes from the stats planIndex made, for the
// index's manifest (nil where it made none).
func knownSizes(infos []fs.FileInfo) []int64 {
	if infos == nil {
		return nil
	}
	sizes := make([]int64, len(infos))
	for i, fi := range infos {
		if fi != nil {
			sizes[i] = fi.Size()
		}
	}
	return sizes
}
