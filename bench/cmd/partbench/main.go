package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
	"github.com/itarconv/itarconv/formats/taridx"
)

// The targets, for each job (issue 28).
const (
	targetTotalRatio    = 1.2  // (tasks + merge) / one run
	targetMergeRatio    = 0.05 // merge / one run: index, tar folds, Barecat
	targetMergeRatioTBL = 0.15 // merge / one run: TBL
	targetManyParts     = 2.0  // seconds: a merge of 1,000 parts of 10,000 shards
)

// mergeTarget is the job's target for merge / one run.
func (j *job) mergeTarget() float64 {
	if j.kind == outFile {
		return targetMergeRatioTBL
	}
	return targetMergeRatio
}

// How the runs are shaped.
const (
	oneWorkers   = 2  // --workers of the one run
	taskWorkers  = 1  // --workers of each task
	mergeWorkers = 2  // --workers of the merge
	parallel     = 2  // tasks running at once
	tasksA       = 4  // tasks of a run on dataset A
	tasksMany    = 10 // tasks of a run on the set of many shards
	stampName    = "partbench.json"
)

// groups are the values of -only: the jobs on dataset A.
var groups = []string{"index", "all", "tbl", "barecat", "fold"}

func main() {
	os.Exit(run())
}

type config struct {
	dir   string
	reps  int
	quick bool
	many  int
	// manyTasks is the number of tasks of the set of many shards, and
	// manyJobs its jobs.
	manyTasks int
	manyJobs  map[string]bool
	quiet     time.Duration
	only      map[string]bool
}

func run() int {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", filepath.Join(os.TempDir(), "partbench"), "keep the datasets in this directory and reuse them on later runs")
	flag.IntVar(&cfg.reps, "reps", 3, "timed runs of each job (the median is reported)")
	flag.BoolVar(&cfg.quick, "quick", false, "smoke run: small datasets, one rep unless -reps is given")
	flag.IntVar(&cfg.many, "many", 10_000, "shards of the set that measures the merge at scale (0: skip it)")
	flag.IntVar(&cfg.manyTasks, "many-tasks", tasksMany, "tasks (parts to merge) of the set of many shards: 1000 for the merge of 1,000 parts")
	flag.DurationVar(&cfg.quiet, "quiet-wait", 10*time.Second, "before each rep, wait up to this long for other processes to leave the CPUs idle (0: do not wait)")
	manyJobs := flag.String("many-jobs", "index,all,tbl", "jobs on the set of many shards, a comma-separated list of: index, all, tbl")
	only := flag.String("only", strings.Join(groups, ","), "jobs on dataset A, a comma-separated list of: "+strings.Join(groups, ", ")+" (empty: none)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "partbench: no arguments expected")
		return 2
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.quick && !set["reps"] {
		cfg.reps = 1
	}
	if cfg.quick && !set["many"] {
		cfg.many = 500
	}
	if cfg.reps < 1 {
		fmt.Fprintln(os.Stderr, "partbench: -reps must be at least 1")
		return 2
	}
	if cfg.manyTasks < 1 {
		fmt.Fprintln(os.Stderr, "partbench: -many-tasks must be at least 1")
		return 2
	}
	if cfg.many != 0 && cfg.many < cfg.manyTasks {
		fmt.Fprintf(os.Stderr, "partbench: -many must be 0 or at least -many-tasks (%d)\n", cfg.manyTasks)
		return 2
	}
	cfg.only = map[string]bool{}
	for _, g := range strings.Split(*only, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if !slices.Contains(groups, g) {
			fmt.Fprintf(os.Stderr, "partbench: -only: %q is not one of %s\n", g, strings.Join(groups, ", "))
			return 2
		}
		cfg.only[g] = true
	}
	cfg.manyJobs = map[string]bool{}
	for _, g := range strings.Split(*manyJobs, ",") {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if !slices.Contains([]string{"index", "all", "tbl"}, g) {
			fmt.Fprintf(os.Stderr, "partbench: -many-jobs: %q is not one of index, all, tbl\n", g)
			return 2
		}
		cfg.manyJobs[g] = true
	}
	// The command line that reproduces the run: the flags given, in order.
	repro := []string{"go run ./bench/cmd/partbench"}
	flag.Visit(func(f *flag.Flag) { repro = append(repro, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	if err := runBench(cfg, strings.Join(repro, " ")); err != nil {
		fmt.Fprintf(os.Stderr, "partbench: %v\n", err)
		return 1
	}
	return 0
}

// Kinds of output, as they are compared.
const (
	outIndex   = iota // OUT.taridx and its manifest, OUT.taridx.shards.json
	outFile           // one file
	outBarecat        // the archive's shards and its listing
	outDir            // a directory, every file in it
)

// job is one command measured as one run and as tasks plus merge.
type job struct {
	set      string   // the dataset's label
	name     string   // the job's label
	cmd      string   // itarconv's subcommand: index or convert
	flags    []string // its flags that shape the output
	inputs   []string // SHARDS, @LIST or IN.tbl
	warm     []string // the input files
	show     string   // the inputs as shown
	out      string   // the output's name, in the one run's and the parts' directory
	kind     int      // outIndex, outFile, ...
	tasks    int
	loaders  bool            // writes loaders' files beside the shards
	scale    bool            // tasks on the first rep only; later reps merge their parts again
	snap     string          // where a job at scale keeps its tasks' parts
	shardDir string          // where the shards are
	keep     map[string]bool // the names in shardDir that are the dataset's
	shards   int

	one, task, merge, total   []float64
	cpuOne, cpuTask, cpuMerge []float64
	rssOne, rssTask, rssMerge int64
	copied, linked, outBytes  int64
	copiedKnown               bool
}

// argv is the job's command line into out: the one run's (task "") or a
// task's.
func (j *job) argv(out string, workers int, task string, inputs []string) []string {
	a := append([]string{j.cmd, "-q"}, j.flags...)
	if j.cmd == "index" {
		a = append(a, "-o", out)
	}
	a = append(a, "--workers", fmt.Sprint(workers))
	if task != "" {
		a = append(a, "--task", task)
	}
	a = append(a, inputs...)
	if j.cmd == "convert" {
		a = append(a, out)
	}
	return a
}

// shown is the job's command line as the report shows it.
func (j *job) shown(workers int, task string) string {
	return "itarconv " + strings.Join(j.argv(j.out, workers, task, []string{j.show}), " ")
}

// env is what every run needs.
type env struct {
	bin   string
	work  string // the outputs of the runs go here
	one   string // the one run's output directory
	parts string // the tasks' output directory (and the merge's)
	// Where the loaders' files beside the shards are put after the one run
	// and after the merge, to be compared.
	oneLoaders, partLoaders string

	mu           sync.Mutex // guards what follows, and lowerPeak
	floor        int64      // the highest RSS of this program when a child started
	floorUnknown bool
}

func runBench(cfg config, repro string) error {
	tmp, err := os.MkdirTemp("", "partbench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return err
	}
	// The outputs sit beside the datasets, on their file system. They take
	// a few GiB: an interrupted run must not leave them behind. The
	// children get the terminal's signal themselves.
	work, err := os.MkdirTemp(cfg.dir, "partbench-work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bench.RemoveOnInterrupt(work, tmp)

	e := &env{bin: filepath.Join(tmp, "itarconv"), work: work,
		one: filepath.Join(work, "one"), parts: filepath.Join(work, "parts"),
		oneLoaders: filepath.Join(work, "one-loaders"), partLoaders: filepath.Join(work, "parts-loaders")}
	t0 := time.Now()
	if err := bench.BuildItarconv(e.bin); err != nil {
		return err
	}
	fmt.Printf("built itarconv in %.1fs\n", time.Since(t0).Seconds())

	var jobs []*job
	var warm []string
	if len(cfg.only) > 0 {
		d := bench.DatasetA
		if cfg.quick {
			d = d.Scaled(2_000)
		}
		dir := filepath.Join(cfg.dir, fmt.Sprintf("%s-%d", d.Name, d.Members))
		shards, err := prepare(d, dir)
		if err != nil {
			return err
		}
		warm = append(warm, shards...)
		base := job{set: "A", inputs: shards, warm: shards, show: "SHARDS...", tasks: tasksA, shardDir: dir, keep: keepSet(shards), shards: d.Shards}
		add := func(g string, j job) {
			if cfg.only[g] {
				jobs = append(jobs, &j)
			}
		}
		ix := base
		ix.name, ix.cmd, ix.out, ix.kind = "index", "index", "OUT.taridx", outIndex
		add("index", ix)
		all := ix
		all.name, all.flags, all.loaders = "index --format all", []string{"--format", "all"}, true
		add("all", all)
		tbl := base
		tbl.name, tbl.cmd, tbl.out, tbl.kind = "tar -> TBL", "convert", "OUT.tbl", outFile
		add("tbl", tbl)
		bc := tbl
		bc.name, bc.out, bc.kind = "tar -> Barecat", "OUT.barecat", outBarecat
		add("barecat", bc)
		if cfg.only["fold"] {
			// The fold's source: A converted to TBL once, untimed.
			in := filepath.Join(work, "src", "IN.tbl")
			if err := os.MkdirAll(filepath.Dir(in), 0o755); err != nil {
				return err
			}
			t0 := time.Now()
			if _, err := e.itarconv(append(append([]string{"convert", "-q"}, shards...), in)...); err != nil {
				return err
			}
			fmt.Printf("source of TBL -> tar fold: %s (%.0f MiB) in %.1fs\n", in, float64(sizeOf(in))/(1<<20), time.Since(t0).Seconds())
			warm = append(warm, in)
			fold := tbl
			fold.name, fold.inputs, fold.warm, fold.show, fold.out, fold.kind = "TBL -> tar fold", []string{in}, []string{in}, "IN.tbl", "OUT", outDir
			jobs = append(jobs, &fold)
		}
	}
	if cfg.many > 0 {
		// Many small shards: 10 members of 100-500 bytes each.
		d := bench.Dataset{Name: fmt.Sprintf("M%d", cfg.many), Fold: "many", Members: 10 * cfg.many, Shards: cfg.many,
			MinSize: 100, MaxSize: 500, Seed: 3}
		dir := filepath.Join(cfg.dir, fmt.Sprintf("%s-%d", d.Name, d.Members))
		shards, err := prepare(d, dir)
		if err != nil {
			return err
		}
		warm = append(warm, shards...)
		// The shards are named in a list file: 10,000 paths would make a
		// long command line.
		list := filepath.Join(work, "many.list")
		if err := os.WriteFile(list, []byte(strings.Join(shards, "\n")+"\n"), 0o644); err != nil {
			return err
		}
		base := job{set: d.Name, inputs: []string{"@" + list}, warm: shards, show: "@LIST", tasks: cfg.manyTasks, shardDir: dir,
			keep: keepSet(shards), shards: d.Shards, scale: true}
		ix := base
		ix.name, ix.cmd, ix.out, ix.kind = "index", "index", "OUT.taridx", outIndex
		all := ix
		all.name, all.flags, all.loaders = "index --format all", []string{"--format", "all"}, true
		tbl := base
		tbl.name, tbl.cmd, tbl.out, tbl.kind = "tar -> TBL", "convert", "OUT.tbl", outFile
		// A copy of TBL's parts is not the run's: their samples are in a
		// data file the merge takes as the output only where the parts
		// are the tasks' own, and a copy's merge copies them. Its few tasks
		// (a second or so) run on every rep; a thousand, on the first.
		tbl.scale = cfg.manyTasks >= 100
		ix.snap, all.snap, tbl.snap = filepath.Join(work, "snap-index"), filepath.Join(work, "snap-all"), filepath.Join(work, "snap-tbl")
		for _, j := range []struct {
			name string
			job  *job
		}{{"index", &ix}, {"all", &all}, {"tbl", &tbl}} {
			if cfg.manyJobs[j.name] {
				jobs = append(jobs, j.job)
			}
		}
	}
	if len(jobs) == 0 {
		return errors.New("nothing to run (-only and -many select no job)")
	}
	for _, d := range []string{e.one, e.parts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	fmt.Printf("%d cores, GOMAXPROCS %d, %d timed reps of each job; one run --workers %d; tasks --workers %d, %d at a time; merge --workers %d\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.reps, oneWorkers, taskWorkers, parallel, mergeWorkers)
	fmt.Println("commands (OUT in a directory of its own for each side; the parts go to .OUT.parts/ beside it):")
	for _, j := range jobs {
		fmt.Printf("  %s %s: %s\n", j.set, j.name, j.shown(oneWorkers, ""))
		fmt.Printf("  %s %s: %s, K = 0..%d; itarconv merge -q --json --workers %d %s\n",
			strings.Repeat(" ", len(j.set)), strings.Repeat(" ", len(j.name)), j.shown(taskWorkers, fmt.Sprintf("K/%d", j.tasks)),
			j.tasks-1, mergeWorkers, j.out)
	}
	fmt.Println()

	// Warm the page cache, so that every run reads from memory.
	if err := bench.Warm(warm); err != nil {
		return err
	}
	// The repetitions are interleaved (each rep runs every job once) so
	// that a slow phase of the machine hits all jobs alike. On a shared
	// machine each rep waits for a quiet moment first; the noise meter then
	// counts the load during the reps only.
	var noise bench.NoiseMeter
	busyStarts := 0
	var waited time.Duration
	for rep := range cfg.reps {
		w, quiet := bench.WaitQuiet(cfg.quiet)
		waited += w
		if !quiet {
			busyStarts++
		}
		noise.Resume()
		for _, j := range jobs {
			t0 := time.Now()
			if err := e.runJob(j, rep); err != nil {
				return fmt.Errorf("%s %s: %w", j.set, j.name, err)
			}
			fmt.Printf("rep %d/%d: %s %s: one %.3fs, tasks %.3fs, merge %.3fs (%.0fs with checks)\n", rep+1, cfg.reps, j.set, j.name,
				j.one[len(j.one)-1], j.task[len(j.task)-1], j.merge[len(j.merge)-1], time.Since(t0).Seconds())
		}
		noise.Pause()
	}
	if cfg.quiet > 0 {
		fmt.Printf("waited %.1fs in all for a quiet machine before the reps; %d of %d reps started with other processes still busy\n",
			waited.Seconds(), busyStarts, cfg.reps)
	}
	// Nothing of the runs stays beside the kept datasets.
	for _, j := range jobs {
		if err := stash(j, ""); err != nil {
			return err
		}
	}
	fmt.Println("checks: every merged output equals the one run's, byte for byte (Barecat: `itarconv ls` without where files lie, its files as one tar stream, and `itarconv verify`; a tar fold: its members and index rows in order, and `itarconv verify --data`), and the merge removed the parts")
	fmt.Println(noise.Report("the reps"))
	fmt.Println()
	printTable(os.Stdout, jobs, e.floor, e.floorUnknown)
	fmt.Println()
	printTargets(os.Stdout, jobs, cfg.quick)
	fmt.Println()
	fmt.Println("reproduce:", repro)
	return nil
}

// prepare generates dataset d into dir, or reuses it, and says which.
func prepare(d bench.Dataset, dir string) ([]string, error) {
	t0 := time.Now()
	shards, reused, err := bench.Prepare(d, dir, stampName)
	if err != nil {
		return nil, err
	}
	what := "generated"
	if reused {
		what = "reused"
	}
	var size int64
	for _, s := range shards {
		size += sizeOf(s)
	}
	fmt.Printf("dataset %s: %s %d members in %d shards (%.0f MiB) in %s in %.1fs\n",
		d.Name, what, d.Members, d.Shards, float64(size)/(1<<20), dir, time.Since(t0).Seconds())
	return shards, nil
}

// keepSet is the names of the dataset's files: its shards and its stamp.
func keepSet(shards []string) map[string]bool {
	keep := map[string]bool{stampName: true}
	for _, s := range shards {
		keep[filepath.Base(s)] = true
	}
	return keep
}

// baseNames are the base names of paths.
func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// runJob runs job j once as one run and once as tasks and merge, checks
// that both wrote the same, and removes what the previous rep wrote. A job
// at scale runs its tasks on the first rep only, and keeps a copy of their
// parts (and hard links to the loaders' files they wrote beside the
// shards) from which later reps merge again.
func (e *env) runJob(j *job, rep int) error {
	if err := e.clean(j); err != nil {
		return err
	}
	// The inputs are read again before each timed step: on this kind of
	// machine, pages left untouched for some seconds are slow to reach
	// again, even in the page cache, and the step after a pause would pay.
	if err := bench.Warm(j.warm); err != nil {
		return err
	}
	one, err := e.itarconv(j.argv(filepath.Join(e.one, j.out), oneWorkers, "", j.inputs)...)
	if err != nil {
		return err
	}
	if j.loaders {
		// The tasks write these files again, beside the shards: the one
		// run's are kept aside, to be compared.
		if err := stash(j, e.oneLoaders); err != nil {
			return err
		}
	}
	merged := filepath.Join(e.parts, j.out)
	partsDir := filepath.Join(e.parts, "."+j.out+".parts")
	if !j.scale || rep == 0 {
		syscall.Sync()
		if err := bench.Warm(j.warm); err != nil {
			return err
		}
		tasks, err := e.runTasks(j)
		if err != nil {
			return err
		}
		j.task = append(j.task, tasks.wall)
		j.cpuTask = append(j.cpuTask, tasks.cpu)
		j.rssTask = max(j.rssTask, tasks.rss)
		if j.scale {
			if err := copyTree(partsDir, filepath.Join(j.snap, "parts")); err != nil {
				return err
			}
			if j.loaders {
				if err := linkExtras(j, filepath.Join(j.snap, "loaders")); err != nil {
					return err
				}
			}
		}
	} else {
		if err := copyTree(filepath.Join(j.snap, "parts"), partsDir); err != nil {
			return err
		}
		if j.loaders {
			if err := linkFiles(filepath.Join(j.snap, "loaders"), j.shardDir); err != nil {
				return err
			}
		}
	}
	syscall.Sync()
	partFiles, err := listTree(partsDir)
	if err != nil {
		return err
	}
	for i, f := range partFiles {
		partFiles[i] = filepath.Join(partsDir, f)
	}
	if err := bench.Warm(partFiles); err != nil {
		return err
	}
	merge, err := e.itarconv("merge", "-q", "--json", "--workers", fmt.Sprint(mergeWorkers), merged)
	if err != nil {
		return err
	}
	j.one = append(j.one, one.wall)
	j.merge = append(j.merge, merge.wall)
	j.total = append(j.total, j.task[len(j.task)-1]+merge.wall)
	j.cpuOne = append(j.cpuOne, one.cpu)
	j.cpuMerge = append(j.cpuMerge, merge.cpu)
	j.rssOne, j.rssMerge = max(j.rssOne, one.rss), max(j.rssMerge, merge.rss)
	if err := j.mergeStats(merge.stdout); err != nil {
		return err
	}

	// The checks, untimed.
	if err := partsGone(merged); err != nil {
		return err
	}
	return e.same(j)
}

// copyTree copies the files under src into dst, which it creates anew.
func copyTree(src, dst string) error {
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(to, info.Mode().Perm())
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, info.Mode().Perm())
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		return errors.Join(err, out.Close())
	})
}

// linkExtras hard-links every file in the job's shard directory that is
// not the dataset's into dir, under its path relative to the shard
// directory.
func linkExtras(j *job, dir string) error {
	ents, err := os.ReadDir(j.shardDir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, en := range ents {
		if j.keep[en.Name()] {
			continue
		}
		if err := linkFiles(filepath.Join(j.shardDir, en.Name()), filepath.Join(dir, en.Name())); err != nil {
			return err
		}
	}
	return nil
}

// linkFiles hard-links the file src as dst, or, if src is a directory,
// every file under it into dst, under its path relative to src.
func linkFiles(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		return os.Link(p, to)
	})
}

// mergeStats reads the bytes copied and linked from the merge's JSON: the
// target's figures, with a "merge" object (conversions only).
func (j *job) mergeStats(out []byte) error {
	var v struct {
		Merge map[string]any `json:"merge"`
	}
	if err := bench.Result(out, &v); err != nil {
		return fmt.Errorf("itarconv merge --json: %v in %q", err, out)
	}
	if v.Merge == nil {
		return nil
	}
	num := func(keys ...string) (int64, bool) {
		for _, k := range keys {
			if f, ok := v.Merge[k].(float64); ok {
				return int64(f), true
			}
		}
		return 0, false
	}
	j.copied, j.copiedKnown = num("bytes_copied", "copied_bytes")
	j.linked, _ = num("bytes_linked", "linked_bytes")
	return nil
}

// runTasks runs the job's tasks, parallel at a time, and times the whole
// schedule. The CPU time is the sum over the tasks, the RSS the highest.
func (e *env) runTasks(j *job) (proc, error) {
	var mu sync.Mutex
	var r proc
	var errs []error
	next := make(chan int)
	var wg sync.WaitGroup
	out := filepath.Join(e.parts, j.out)
	start := time.Now()
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				p, err := e.itarconv(j.argv(out, taskWorkers, fmt.Sprintf("%d/%d", k, j.tasks), j.inputs)...)
				mu.Lock()
				r.cpu += p.cpu
				r.rss = max(r.rss, p.rss)
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	for k := range j.tasks {
		next <- k
	}
	close(next)
	wg.Wait()
	r.wall = time.Since(start).Seconds()
	return r, errors.Join(errs...)
}

// proc is one finished run of itarconv.
type proc struct {
	wall, cpu float64
	rss       int64
	stdout    []byte
}

// itarconv runs the binary with args and times it.
func (e *env) itarconv(args ...string) (proc, error) {
	var stdout bytes.Buffer
	p, err := e.run(&stdout, args...)
	p.stdout = stdout.Bytes()
	return p, err
}

// run runs the binary with args, its output to stdout, and times it.
func (e *env) run(stdout io.Writer, args ...string) (proc, error) {
	cmd := exec.Command(e.bin, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &stderr
	e.lowerPeak()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		return proc{}, fmt.Errorf("itarconv %s: %v\n%s", shorten(args), err, stderr.Bytes())
	}
	return proc{wall: wall, cpu: bench.CPUSeconds(cmd.ProcessState), rss: bench.MaxRSS(cmd.ProcessState)}, nil
}

// lowerPeak lowers this program's peak RSS to what it holds now, as small
// as it can be, before a child starts. Linux counts the peak of the
// process that starts a child in the child's ru_maxrss (the memory the
// child shares with it until its exec): without this, every child would
// show at least this program's own peak. floor keeps the highest RSS this
// program had when a child started, the least any child can show.
func (e *env) lowerPeak() {
	e.mu.Lock()
	defer e.mu.Unlock()
	debug.FreeOSMemory()
	if os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) != nil {
		e.floorUnknown = true
		return
	}
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		e.floorUnknown = true
		return
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscan(strings.TrimSuffix(strings.TrimSpace(v), " kB"), &kib); err == nil {
				e.floor = max(e.floor, kib<<10)
				return
			}
		}
	}
	e.floorUnknown = true
}

// shorten keeps a failed command's line readable: a long list of shards
// is cut.
func shorten(args []string) string {
	if len(args) > 12 {
		args = append(slices.Clone(args[:10]), fmt.Sprintf("... (%d more)", len(args)-11), args[len(args)-1])
	}
	return strings.Join(args, " ")
}

// clean removes what job j's runs wrote: both outputs, the parts and the
// record of their merge, the loaders' files beside the shards (every name
// in the shard directory that is not the dataset's); then it syncs the file
// system, so that the next timed run does not pay for this one's unlinks.
func (e *env) clean(j *job) error {
	for _, d := range []string{e.one, e.parts, e.oneLoaders, e.partLoaders} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
	}
	for _, d := range []string{e.one, e.parts} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := stash(j, ""); err != nil {
		return err
	}
	syscall.Sync()
	return nil
}

// stash moves every name in the job's shard directory that is not the
// dataset's into dir, or removes it if dir is "".
func stash(j *job, dir string) error {
	ents, err := os.ReadDir(j.shardDir)
	if err != nil {
		return err
	}
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	for _, en := range ents {
		if j.keep[en.Name()] {
			continue
		}
		p := filepath.Join(j.shardDir, en.Name())
		if dir == "" {
			err = os.RemoveAll(p)
		} else {
			err = os.Rename(p, filepath.Join(dir, en.Name()))
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// partsGone checks that the merge removed the parts: the parts directory
// beside out holds nothing but the record of the merge.
func partsGone(out string) error {
	dir := filepath.Join(filepath.Dir(out), "."+filepath.Base(out)+".parts")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("after the merge: %w", err)
	}
	for _, en := range ents {
		if en.Name() != "merged.json" {
			return fmt.Errorf("after the merge, %s still holds %s", dir, en.Name())
		}
	}
	return nil
}

// same checks that the merge wrote what the one run wrote, and records the
// size of the output.
func (e *env) same(j *job) error {
	one, merged := filepath.Join(e.one, j.out), filepath.Join(e.parts, j.out)
	var files []string // names in e.one and e.parts to compare
	switch j.kind {
	case outIndex:
		files = []string{j.out, j.out + ".shards.json"}
	case outFile:
		files = []string{j.out}
	case outBarecat:
		// The merge keeps the tasks' shards: where a file lies
		// may differ from one run's, not the files, their paths, bytes and
		// order. Compared: ls without shard and offset, the archive as one
		// tar stream, and verify.
		ha, hb := sha256.New(), sha256.New()
		ca, cb := &countWriter{w: &lsNames{w: ha}}, &countWriter{w: &lsNames{w: hb}}
		if _, err := e.run(ca, "ls", one); err != nil {
			return err
		}
		if _, err := e.run(cb, "ls", merged); err != nil {
			return err
		}
		if !bytes.Equal(ha.Sum(nil), hb.Sum(nil)) {
			return fmt.Errorf("itarconv ls of the merged archive differs from the one run's (%d and %d bytes)", cb.n, ca.n)
		}
		if ca.n == 0 {
			return errors.New("itarconv ls lists no file of the archive")
		}
		ha, hb = sha256.New(), sha256.New()
		if _, err := e.run(ha, "convert", "-q", one, "-"); err != nil {
			return err
		}
		if _, err := e.run(hb, "convert", "-q", merged, "-"); err != nil {
			return err
		}
		if !bytes.Equal(ha.Sum(nil), hb.Sum(nil)) {
			return errors.New("the merged archive's files, as one tar stream, differ from the one run's")
		}
		if _, err := e.itarconv("verify", "-q", merged); err != nil {
			return fmt.Errorf("itarconv verify of the merged archive: %w", err)
		}
		shards, _ := filepath.Glob(merged + "-shard-*")
		files = append([]string{j.out}, baseNames(shards)...)
	case outDir:
		// A tar fold merged from parts keeps the members, their bytes and
		// order, and its index the rows; where shards end may differ.
		if err := sameFold(one, merged); err != nil {
			return err
		}
		if _, err := e.itarconv("verify", "-q", "--data", merged); err != nil {
			return fmt.Errorf("itarconv verify of the merged fold: %w", err)
		}
	}
	j.outBytes = 0
	for _, f := range files {
		// A Barecat archive's files are counted, compared above.
		if j.kind != outBarecat {
			if err := sameFile(filepath.Join(e.one, f), filepath.Join(e.parts, f)); err != nil {
				return err
			}
		}
		j.outBytes += sizeOf(filepath.Join(e.parts, f))
	}
	if j.kind == outDir {
		j.outBytes = treeSize(merged)
	}
	if j.loaders {
		if err := stash(j, e.partLoaders); err != nil {
			return err
		}
		if err := sameTree(e.oneLoaders, e.partLoaders); err != nil {
			return fmt.Errorf("the loaders' files beside the shards: %w", err)
		}
		n := countFiles(e.oneLoaders)
		if n < j.shards {
			return fmt.Errorf("the loaders' files beside the shards: %d files for %d shards", n, j.shards)
		}
		j.outBytes += treeSize(e.partLoaders)
	}
	return nil
}

// lsNames passes on each line of ls's listing as its first and last
// columns (a file's path and size), leaving out where it lies.
type lsNames struct {
	w    io.Writer
	line []byte
}

func (l *lsNames) Write(p []byte) (int, error) {
	for _, c := range p {
		if c != '\n' {
			l.line = append(l.line, c)
			continue
		}
		f := bytes.Fields(l.line)
		if len(f) > 0 {
			if _, err := fmt.Fprintf(l.w, "%s %s\n", f[0], f[len(f)-1]); err != nil {
				return 0, err
			}
		}
		l.line = l.line[:0]
	}
	return len(p), nil
}

// countWriter counts what it passes on.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return c.w.Write(p)
}

// cmpBufs are sameFile's buffers: allocating them for each of tens of
// thousands of small files would cost more than reading the files.
var cmpBufs [2][256 << 10]byte

// sameFile compares two files byte for byte.
func sameFile(a, b string) error {
	fa, err := os.Open(a)
	if err != nil {
		return err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return err
	}
	defer fb.Close()
	ba, bb := cmpBufs[0][:], cmpBufs[1][:]
	var off int64
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			i := 0
			for i < min(na, nb) && ba[i] == bb[i] {
				i++
			}
			return fmt.Errorf("%s differs from the one run's %s at byte %d", b, a, off+int64(i))
		}
		off += int64(na)
		if ea != nil || eb != nil {
			if (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF) {
				return nil
			}
			return errors.Join(ea, eb)
		}
	}
}

// sameTree compares two directories: the same files under the same
// names, byte for byte.
func sameTree(a, b string) error {
	la, err := listTree(a)
	if err != nil {
		return err
	}
	lb, err := listTree(b)
	if err != nil {
		return err
	}
	if !slices.Equal(la, lb) {
		return fmt.Errorf("%s holds %d files, the one run's %s %d, not under the same names", b, len(lb), a, len(la))
	}
	for _, f := range la {
		if err := sameFile(filepath.Join(a, f), filepath.Join(b, f)); err != nil {
			return err
		}
	}
	return nil
}

// listTree lists the files under dir, by their paths relative to it.
func listTree(dir string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		out = append(out, rel)
		return err
	})
	slices.Sort(out)
	return out, err
}

func countFiles(dir string) int {
	l, _ := listTree(dir)
	return len(l)
}

func treeSize(dir string) int64 {
	var n int64
	l, _ := listTree(dir)
	for _, f := range l {
		n += sizeOf(filepath.Join(dir, f))
	}
	return n
}

func sizeOf(p string) int64 {
	if st, err := os.Stat(p); err == nil {
		return st.Size()
	}
	return 0
}

// spread is a median with its range.
func spread(xs []float64) string {
	return fmt.Sprintf("%.3f (%.3f-%.3f)", bench.Median(xs), slices.Min(xs), slices.Max(xs))
}

func mib(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

func printTable(w io.Writer, jobs []*job, floor int64, floorUnknown bool) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tjob\tshards\ttasks\tone run s\ttasks s\tmerge s\ttotal s\ttotal/one\tmerge/one\tmerge ms/shard\tcopied MiB\toutput MiB\tcpu s one/tasks/merge\tRSS MiB one/task/merge\t")
	for _, j := range jobs {
		one, merge := bench.Median(j.one), bench.Median(j.merge)
		copied := "-"
		if j.copiedKnown {
			copied = mib(j.copied)
			if j.linked > 0 {
				copied += " (+" + mib(j.linked) + " linked)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%.2fx\t%.1f%%\t%.3f\t%s\t%s\t%.2f/%.2f/%.2f\t%s/%s/%s\t\n",
			j.set, j.name, j.shards, j.tasks, spread(j.one), spread(j.task), spread(j.merge), spread(j.total),
			bench.Median(j.total)/one, 100*merge/one, 1000*merge/float64(j.shards), copied, mib(j.outBytes),
			bench.Median(j.cpuOne), bench.Median(j.cpuTask), bench.Median(j.cpuMerge),
			mib(j.rssOne), mib(j.rssTask), mib(j.rssMerge))
	}
	tw.Flush()
	fmt.Fprintf(bw, "seconds: median (min-max) wall time, process start included; one run: --workers %d; tasks: the whole schedule of\n", oneWorkers)
	fmt.Fprintf(bw, "the tasks (--workers %d, %d at a time); merge: itarconv merge --workers %d, removing the parts included; total = tasks + merge\n", taskWorkers, parallel, mergeWorkers)
	fmt.Fprintln(bw, "of each rep; total/one and merge/one: ratios of the medians; merge ms/shard = median merge / shards;")
	fmt.Fprintln(bw, "copied: the bytes the merge copied (its --json \"merge\" figures; - for an index, which has none); output: the merged")
	fmt.Fprintln(bw, "output's files (--format all: with the loaders' files beside the shards); cpu s: median user+sys (tasks: summed);")
	if floorUnknown {
		fmt.Fprintln(bw, "RSS: the highest peak of all runs (ru_maxrss, which counts this program's own peak: no /proc/self/clear_refs to lower it).")
	} else {
		fmt.Fprintf(bw, "RSS: the highest peak of all runs (ru_maxrss, which counts this program's resident memory when the child started: at most %s MiB).\n", mib(floor))
	}
	var once []string
	for _, j := range jobs {
		if j.scale {
			once = append(once, j.set+" "+j.name)
		}
	}
	if len(once) > 0 {
		fmt.Fprintf(bw, "%s: the tasks ran once, on the first rep; each later rep merged again from a copy of their parts.\n", strings.Join(once, ", "))
	}
}

func printTargets(w io.Writer, jobs []*job, quick bool) {
	if quick {
		fmt.Fprintln(w, "targets (-quick: small datasets, so the verdicts mean little):")
	} else {
		fmt.Fprintln(w, "targets:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, j := range jobs {
		one, total, merge := bench.Median(j.one), bench.Median(j.total), bench.Median(j.merge)
		label := fmt.Sprintf("  %s %s (%d tasks)", j.set, j.name, j.tasks)
		fmt.Fprintf(tw, "%s\ttasks + merge <= %.1fx one run\t%.3fs / %.3fs = %.2fx\t%s\n", label, targetTotalRatio,
			total, one, total/one, bench.Verdict(total/one <= targetTotalRatio))
		fmt.Fprintf(tw, "%s\tmerge <= %.0f%% of one run\t%.3fs / %.3fs = %.1f%%\t%s\n", label, 100*j.mergeTarget(),
			merge, one, 100*merge/one, bench.Verdict(merge/one <= j.mergeTarget()))
		if j.scale && j.kind == outIndex && j.tasks >= 1000 {
			fmt.Fprintf(tw, "%s\tmerge of %d parts of %d shards < %.0fs\t%.3fs\t%s\n", label, j.tasks, j.shards, targetManyParts,
				merge, bench.Verdict(merge < targetManyParts))
		}
	}
	tw.Flush()
}

// sameFold compares two folds of tar shards: the same members, headers and
// payloads, in order, across their shards (*.tar, by name), and indexes
// (*.taridx) of the same header and tables and the same rows but for
// where each member lies (fid and offset).
func sameFold(a, b string) error {
	ma, err := foldDigest(a)
	if err != nil {
		return err
	}
	mb, err := foldDigest(b)
	if err != nil {
		return err
	}
	if ma.members == 0 {
		return fmt.Errorf("%s: no members", a)
	}
	if ma.members != mb.members || ma.sum != mb.sum {
		return fmt.Errorf("%s holds %d members, the one run's %s %d, or not the same", b, mb.members, a, ma.members)
	}
	if !slices.Equal(ma.indexes, mb.indexes) {
		return fmt.Errorf("the index of %s differs from the one run's (%d rows, not %d)", b, mb.rows, ma.rows)
	}
	return nil
}

type foldSum struct {
	members, rows int
	sum           [32]byte
	indexes       []string // each index's header, tables and rows, digested
}

func foldDigest(dir string) (foldSum, error) {
	var fs foldSum
	shards, _ := filepath.Glob(filepath.Join(dir, "*.tar"))
	slices.Sort(shards)
	h := sha256.New()
	for _, s := range shards {
		f, err := os.Open(s)
		if err != nil {
			return fs, err
		}
		tr := tar.NewReader(bufio.NewReaderSize(f, 1<<20))
		for {
			hd, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				f.Close()
				return fs, fmt.Errorf("%s: %w", s, err)
			}
			fmt.Fprintf(h, "%q %c %d %o %q %d %d %d\n", hd.Name, hd.Typeflag, hd.Size, hd.Mode, hd.Linkname, hd.ModTime.UnixNano(), hd.Uid, hd.Gid)
			if _, err := io.Copy(h, tr); err != nil {
				f.Close()
				return fs, fmt.Errorf("%s: %w", s, err)
			}
			fs.members++
		}
		f.Close()
	}
	copy(fs.sum[:], h.Sum(nil))
	idxs, _ := filepath.Glob(filepath.Join(dir, "*.taridx"))
	slices.Sort(idxs)
	for _, p := range idxs {
		x, err := taridx.ReadFile(p)
		if err != nil {
			return fs, err
		}
		d := sha256.New()
		fmt.Fprintf(d, "%s %d %d %d %q %q\n", filepath.Base(p), x.Header.NStems, x.Header.NCrash, x.Header.Flags, x.Exts, x.CrashStems)
		for i := range int(x.Header.NRows) {
			r := x.Row(i)
			fmt.Fprintf(d, "%d %d %d %d\n", r.Size, r.ExtID, r.CrashID, r.KeyHash)
		}
		fs.rows += int(x.Header.NRows)
		fs.indexes = append(fs.indexes, fmt.Sprintf("%x", d.Sum(nil)))
	}
	return fs, nil
}
