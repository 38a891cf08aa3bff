package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
)

// mergeParts is the number of tasks whose parts the merge job joins (the
// issue's "merge of 8 index parts").
const mergeParts = 8

func main() {
	os.Exit(run())
}

type config struct {
	workers []int
	members int // tiny members
	kib     int // members of 1-20 KiB
	reps    int
	quick   bool
	quiet   time.Duration
}

func run() int {
	var cfg config
	ws := flag.String("workers", "", "worker counts, comma-separated (default 1, 2, 4, ... up to the cores)")
	flag.IntVar(&cfg.members, "members", 3_000_000, "one-byte members of the tiny dataset (index, merge, verify, tar -> TBL; a fifth of them gzip-compressed for compressed -> TBL)")
	flag.IntVar(&cfg.kib, "kib-members", 100_000, "members of 1-20 KiB of the dataset for tar -> Barecat")
	flag.IntVar(&cfg.reps, "reps", 3, "timed runs of each job at each worker count (the median is reported)")
	flag.BoolVar(&cfg.quick, "quick", false, "smoke run: small datasets, one rep unless -reps is given")
	flag.DurationVar(&cfg.quiet, "quiet-wait", 5*time.Second, "before each rep, wait up to this long for other processes to leave the CPUs idle (0: do not wait)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "scalebench: no arguments expected")
		return 2
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.quick {
		if !set["reps"] {
			cfg.reps = 1
		}
		if !set["members"] {
			cfg.members = 100_000
		}
		if !set["kib-members"] {
			cfg.kib = 5_000
		}
		if !set["quiet-wait"] {
			cfg.quiet = 0
		}
	}
	cfg.workers = defaultWorkers(runtime.NumCPU())
	if *ws != "" {
		var err error
		if cfg.workers, err = parseWorkers(*ws); err != nil {
			fmt.Fprintf(os.Stderr, "scalebench: %v\n", err)
			return 2
		}
	}
	if cfg.reps < 1 || cfg.members < 2 || cfg.kib < 2 {
		fmt.Fprintln(os.Stderr, "scalebench: -reps must be at least 1, -members and -kib-members at least 2")
		return 2
	}
	repro := []string{"go run ./bench/cmd/scalebench"}
	flag.Visit(func(f *flag.Flag) { repro = append(repro, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	if err := runBench(cfg, strings.Join(repro, " ")); err != nil {
		fmt.Fprintf(os.Stderr, "scalebench: %v\n", err)
		return 1
	}
	return 0
}

// job is one itarconv command, timed at each worker count beside its
// baseline.
type job struct {
	name    string
	data    string // the dataset, as shown
	members int
	base    *baseline
	argv    func(w int) []string // the command line, without the binary
	prep    func() error         // untimed, before each timed run
	times   map[int][]float64
	// written reports the bytes a run wrote, measured after the warm-up
	// run (nil: not reported).
	written func() (int64, error)
	bytes   int64
}

// baseline is a command of the system's own, run on the same inputs as
// many at a time as the workers; several jobs share one.
type baseline struct {
	name  string
	cmds  func(w int) [][]string // the processes, run w at a time
	after func() error           // untimed cleanup
	times map[int][]float64
	done  map[int]int // runs timed at each worker count
}

type env struct {
	bin, work, out string
	data           string // the datasets
}

func runBench(cfg config, repro string) error {
	tmp, err := os.MkdirTemp("", "scalebench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bench.RemoveOnInterrupt(tmp)
	e := &env{bin: filepath.Join(tmp, "itarconv"), work: tmp, out: filepath.Join(tmp, "out"), data: filepath.Join(tmp, "data")}

	// A static binary (no cgo), as users get it; the go command inherits
	// the setting.
	os.Setenv("CGO_ENABLED", "0")
	t0 := time.Now()
	if err := bench.BuildItarconv(e.bin); err != nil {
		return err
	}
	fmt.Printf("built itarconv (CGO_ENABLED=0) in %.1fs\n", time.Since(t0).Seconds())

	maxW := cfg.workers[len(cfg.workers)-1]
	shards := max(8, 2*maxW)
	tiny := bench.Dataset{Name: "tiny", Fold: "tiny", Members: cfg.members &^ 1, Shards: shards, MinSize: 1, MaxSize: 1, Seed: 26}
	tiny = tiny.Scaled(tiny.Members)
	kib := bench.Dataset{Name: "kib", Fold: "kib", Members: cfg.kib &^ 1, Shards: shards, MinSize: 1 << 10, MaxSize: 20 << 10, Seed: 27}
	kib = kib.Scaled(kib.Members)
	gz := tiny.Scaled(tiny.Members / 5)
	gz.Name, gz.Fold, gz.Seed = "gz", "gz", 28

	t0 = time.Now()
	tinyShards, err := tiny.Generate(context.Background(), filepath.Join(e.data, "tiny"))
	if err != nil {
		return err
	}
	kibShards, err := kib.Generate(context.Background(), filepath.Join(e.data, "kib"))
	if err != nil {
		return err
	}
	gzShards, err := generateGzip(gz, filepath.Join(e.data, "gz"))
	if err != nil {
		return err
	}
	fmt.Printf("generated in %.1fs: %d one-byte members in %d shards (%s); %d of 1-20 KiB (%s); %d one-byte, gzip-compressed (%s)\n",
		time.Since(t0).Seconds(), tiny.Members, shards, mib(tinyShards), kib.Members, mib(kibShards), gz.Members, mib(gzShards))
	if err := os.MkdirAll(e.out, 0o755); err != nil {
		return err
	}

	// The baselines.
	tarTF := &baseline{name: "tar -tf, as many at a time", cmds: func(int) [][]string { return each(tinyShards, "tar", "-tf") }}
	catTiny := &baseline{name: "cat > f && sync f, as many at a time", cmds: func(w int) [][]string { return e.cats(tinyShards, w) }, after: e.cleanOut}
	catKiB := &baseline{name: "cat > f && sync f, as many at a time", cmds: func(w int) [][]string { return e.cats(kibShards, w) }, after: e.cleanOut}
	gzipDC := &baseline{name: "gzip -dc, as many at a time", cmds: func(int) [][]string { return each(gzShards, "gzip", "-dc") }}

	out := func(name string) string { return filepath.Join(e.out, name) }
	ws := func(w int) []string { return []string{"--workers", fmt.Sprint(w)} }
	cat := func(parts ...[]string) []string {
		var a []string
		for _, p := range parts {
			a = append(a, p...)
		}
		return a
	}
	tinyDir := filepath.Dir(tinyShards[0])
	// The loaders' files beside the shards, and every output, go between runs.
	clean := func() error {
		return errors.Join(e.cleanOut(), removeExtras(tinyDir, tinyShards))
	}
	verifyIdx := filepath.Join(tmp, "verify", "v.taridx")
	// What an index run wrote: its outputs, and the loaders' files beside
	// the shards.
	indexBytes := func() (int64, error) {
		a, err := treeBytes(e.out, nil)
		if err != nil {
			return 0, err
		}
		b, err := treeBytes(tinyDir, tinyShards)
		return a + b, err
	}
	jobs := []*job{
		{name: "index (TARIDX)", data: "tiny", members: tiny.Members, base: tarTF, prep: clean, written: indexBytes,
			argv: func(w int) []string { return cat([]string{"index", "-q", "-o", out("i.taridx")}, ws(w), tinyShards) }},
		{name: "index --format all", data: "tiny", members: tiny.Members, base: tarTF, prep: clean, written: indexBytes,
			argv: func(w int) []string {
				return cat([]string{"index", "-q", "--format", "all", "-o", out("i.taridx")}, ws(w), tinyShards)
			}},
		{name: fmt.Sprintf("merge of %d index parts", mergeParts), data: "tiny", members: tiny.Members, base: tarTF,
			prep: func() error {
				if err := clean(); err != nil {
					return err
				}
				return e.tasks(out("m.taridx"), tinyShards, maxW)
			},
			argv: func(w int) []string { return cat([]string{"merge", "-q"}, ws(w), []string{out("m.taridx")}) }},
		{name: "verify --data", data: "tiny", members: tiny.Members, base: tarTF, prep: clean,
			argv: func(w int) []string { return cat([]string{"verify", "-q", "--data"}, ws(w), []string{verifyIdx}) }},
		{name: "tar -> TBL", data: "tiny", members: tiny.Members, base: catTiny, prep: clean,
			argv: func(w int) []string { return cat([]string{"convert", "-q"}, ws(w), tinyShards, []string{out("o.tbl")}) }},
		{name: "tar -> Barecat", data: "kib", members: kib.Members, base: catKiB, prep: clean,
			argv: func(w int) []string {
				return cat([]string{"convert", "-q"}, ws(w), kibShards, []string{out("o.barecat")})
			}},
		{name: "gzip shards -> TBL", data: "gz", members: gz.Members, base: gzipDC, prep: clean,
			argv: func(w int) []string { return cat([]string{"convert", "-q"}, ws(w), gzShards, []string{out("o.tbl")}) }},
	}
	for _, j := range jobs {
		j.times = map[int][]float64{}
	}
	for _, b := range []*baseline{tarTF, catTiny, catKiB, gzipDC} {
		b.times, b.done = map[int][]float64{}, map[int]int{}
	}
	// verify's index, made once, untimed.
	if err := os.MkdirAll(filepath.Dir(verifyIdx), 0o755); err != nil {
		return err
	}
	if _, err := e.itarconv(cat([]string{"index", "-q", "-o", verifyIdx}, ws(maxW), tinyShards)...); err != nil {
		return err
	}

	fmt.Printf("workers %v, %d timed reps of each; commands (OUT in a scratch directory):\n", cfg.workers, cfg.reps)
	for _, j := range jobs {
		fmt.Printf("  %-24s itarconv %s\n", j.name+":", strings.Join(shorten(j.argv(maxW), e), " "))
	}
	fmt.Println()

	// Warm-up: the inputs read once, and every command and baseline run
	// once, untimed, so that the page cache holds what the timed runs read.
	all := append(append(append([]string{}, tinyShards...), kibShards...), gzShards...)
	if err := bench.Warm(all); err != nil {
		return err
	}
	t0 = time.Now()
	for _, j := range jobs {
		if _, err := e.timeJob(j, maxW); err != nil {
			return err
		}
		if j.written != nil {
			n, err := j.written()
			if err != nil {
				return err
			}
			j.bytes = n
		}
		if _, err := e.timeBase(j.base, maxW); err != nil {
			return err
		}
	}
	fmt.Printf("warm-up run in %.1fs\n", time.Since(t0).Seconds())

	// The reps interleave (each runs every job at every worker count) so
	// that a slow phase of a shared machine hits all of them alike.
	var noise bench.NoiseMeter
	for rep := range cfg.reps {
		bench.WaitQuiet(cfg.quiet)
		noise.Resume()
		t0 := time.Now()
		for _, w := range cfg.workers {
			for _, j := range jobs {
				t, err := e.timeJob(j, w)
				if err != nil {
					return err
				}
				j.times[w] = append(j.times[w], t)
				if j.base.done[w] <= rep {
					t, err := e.timeBase(j.base, w)
					if err != nil {
						return err
					}
					j.base.times[w] = append(j.base.times[w], t)
					j.base.done[w]++
				}
			}
		}
		noise.Pause()
		fmt.Printf("rep %d/%d in %.1fs\n", rep+1, cfg.reps, time.Since(t0).Seconds())
	}
	if err := clean(); err != nil {
		return err
	}
	floor, err := e.writeFloor(jobs, cfg.reps)
	if err != nil {
		return err
	}
	fmt.Println(noise.Report("the reps"))
	fmt.Println()
	fmt.Println(machine())
	printTable(os.Stdout, cfg, jobs, map[string]string{
		"tiny": fmt.Sprintf("%d one-byte members", tiny.Members),
		"kib":  fmt.Sprintf("%d members of 1-20 KiB", kib.Members),
		"gz":   fmt.Sprintf("%d one-byte members, gzip", gz.Members),
	})
	printWritten(os.Stdout, jobs, tiny.Members)
	fmt.Println()
	printTargets(os.Stdout, cfg, jobs, tiny.Members, kib.Members, floor)
	fmt.Println()
	fmt.Println("reproduce:", repro)
	return nil
}

// generateGzip writes d's shards gzip-compressed (fastest level) into dir,
// as <fold>_NNNN.tar.gz, two at a time.
func generateGzip(d bench.Dataset, dir string) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	paths := make([]string, d.Shards)
	errs := make([]error, d.Shards)
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i := range paths {
		paths[i] = d.ShardPath(dir, i) + ".gz"
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			errs[i] = writeGzip(d, paths[i], i)
		}()
	}
	wg.Wait()
	return paths, errors.Join(errs...)
}

func writeGzip(d bench.Dataset, path string, i int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	bw := bufio.NewWriterSize(zw, 1<<20)
	err = d.WriteShard(context.Background(), bw, i)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = zw.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("generating %s: %w", path, err)
	}
	return nil
}

// timeJob prepares j (untimed), syncs, and times one run with w workers.
func (e *env) timeJob(j *job, w int) (float64, error) {
	if err := j.prep(); err != nil {
		return 0, err
	}
	syscall.Sync()
	t, err := e.itarconvOn(w, j.argv(w)...)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", j.name, err)
	}
	return t, nil
}

// timeBase times one run of the baseline with w at a time.
func (e *env) timeBase(b *baseline, w int) (float64, error) {
	if b.after != nil {
		if err := b.after(); err != nil {
			return 0, err
		}
	}
	syscall.Sync()
	t, err := runPool(w, b.cmds(w))
	if err != nil {
		return 0, fmt.Errorf("%s: %w", b.name, err)
	}
	if b.after != nil {
		return t, b.after()
	}
	return t, nil
}

// itarconv runs the binary and returns its wall time, process start
// included.
func (e *env) itarconv(args ...string) (float64, error) { return e.itarconvOn(0, args...) }

// itarconvOn times one itarconv command run on cores cores (GOMAXPROCS;
// 0: all): with --workers 1, the preparing goroutines and the collector
// would otherwise take the second core, and the 1-worker time would not be
// one core's, which Amdahl's law needs.
func (e *env) itarconvOn(cores int, args ...string) (float64, error) {
	cmd := exec.Command(e.bin, args...)
	if cores > 0 {
		cmd.Env = append(os.Environ(), fmt.Sprintf("GOMAXPROCS=%d", cores))
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("itarconv %s: %v\n%s", strings.Join(shorten(args, e), " "), err, stderr.Bytes())
	}
	return time.Since(t0).Seconds(), nil
}

// tasks writes the parts of an index of shards into out, as mergeParts
// tasks of one worker, w at a time: the merge job's input, untimed.
func (e *env) tasks(out string, shards []string, w int) error {
	var cmds [][]string
	for k := range mergeParts {
		cmds = append(cmds, append([]string{e.bin, "index", "-q", "-o", out, "--workers", "1", "--task", fmt.Sprintf("%d/%d", k, mergeParts)}, shards...))
	}
	_, err := runPool(w, cmds)
	return err
}

// cats is the cat-and-sync baseline: the shards dealt to w processes, each
// copying its share into a file of its own in OUT and syncing it.
func (e *env) cats(shards []string, w int) [][]string {
	cmds := make([][]string, w)
	for k := range cmds {
		cmds[k] = []string{"sh", "-c", `cat "$@" > "$0" && sync "$0"`, filepath.Join(e.out, fmt.Sprintf("cat%d", k))}
	}
	for i, s := range shards {
		cmds[i%w] = append(cmds[i%w], s)
	}
	return cmds
}

func (e *env) cleanOut() error {
	if err := os.RemoveAll(e.out); err != nil {
		return err
	}
	return os.MkdirAll(e.out, 0o755)
}

// removeExtras removes what index --format all wrote beside the shards.
func removeExtras(dir string, shards []string) error {
	keep := map[string]bool{}
	for _, s := range shards {
		keep[filepath.Base(s)] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, en := range ents {
		if !keep[en.Name()] {
			errs = append(errs, os.RemoveAll(filepath.Join(dir, en.Name())))
		}
	}
	return errors.Join(errs...)
}

// treeBytes is the size of the regular files under dir, but for skip's.
func treeBytes(dir string, skip []string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || slices.Contains(skip, p) {
			return err
		}
		info, err := d.Info()
		if err == nil {
			n += info.Size()
		}
		return err
	})
	return n, err
}

// printWritten says what the jobs that report it wrote, and its ratio to
// the first's: what an index for every loader weighs against a TARIDX.
func printWritten(w io.Writer, jobs []*job, members int) {
	var first *job
	for _, j := range jobs {
		if j.written == nil {
			continue
		}
		if first == nil {
			first = j
		}
		fmt.Fprintf(w, "bytes written by %s: %.1f MB, %.1f bytes a member (%.2fx %s)\n",
			j.name, float64(j.bytes)/1e6, float64(j.bytes)/float64(members), float64(j.bytes)/float64(max(first.bytes, 1)), first.name)
	}
}

// each is one command per file: argv then the file.
func each(files []string, argv ...string) [][]string {
	cmds := make([][]string, len(files))
	for i, f := range files {
		cmds[i] = append(append([]string{}, argv...), f)
	}
	return cmds
}

// runPool runs cmds, w at a time (the next starts when one ends), their
// output to /dev/null, and returns the wall time of the whole.
func runPool(w int, cmds [][]string) (float64, error) {
	next := make(chan []string)
	errs := make([]error, w)
	var wg sync.WaitGroup
	t0 := time.Now()
	for k := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for argv := range next {
				if errs[k] != nil {
					continue
				}
				cmd := exec.Command(argv[0], argv[1:]...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				if err := cmd.Run(); err != nil {
					errs[k] = fmt.Errorf("%s: %v: %s", argv[0], err, bytes.TrimSpace(stderr.Bytes()))
				}
			}
		}()
	}
	for _, c := range cmds {
		next <- c
	}
	close(next)
	wg.Wait()
	return time.Since(t0).Seconds(), errors.Join(errs...)
}

// shorten shows a command line with the scratch directory as $TMP and runs
// of shards as SHARDS.
func shorten(args []string, e *env) []string {
	var out []string
	for i, a := range args {
		isShard := strings.HasPrefix(a, e.data+string(filepath.Separator))
		if isShard && i > 0 && strings.HasPrefix(args[i-1], e.data+string(filepath.Separator)) {
			continue
		}
		if isShard {
			out = append(out, filepath.Base(filepath.Dir(a))+"/SHARDS...")
			continue
		}
		out = append(out, strings.ReplaceAll(a, e.work, "$TMP"))
	}
	return out
}

func mib(paths []string) string {
	var n int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
}

// machine names the machine: cores, CPU model, memory.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := "unknown memory"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		if _, err := fmt.Sscanf(string(b), "MemTotal: %d kB", &kb); err == nil {
			mem = fmt.Sprintf("%.0f GiB memory", float64(kb)/(1<<20))
		}
	}
	return fmt.Sprintf("machine: %d cores (GOMAXPROCS %d), %s, %s, %s/%s", runtime.NumCPU(), runtime.GOMAXPROCS(0), model, mem, runtime.GOOS, runtime.GOARCH)
}

func printTable(w io.Writer, cfg config, jobs []*job, sets map[string]string) {
	// A Markdown table, padded to read in a terminal too.
	tw := tabwriter.NewWriter(w, 0, 0, 1, ' ', 0)
	fmt.Fprint(tw, "| job\t| dataset\t")
	for _, n := range cfg.workers {
		fmt.Fprintf(tw, "| %d worker%s\t", n, plural(n))
	}
	fmt.Fprintln(tw, "|")
	fmt.Fprint(tw, "|---\t|---\t")
	for range cfg.workers {
		fmt.Fprint(tw, "|---\t")
	}
	fmt.Fprintln(tw, "|")
	row := func(label, data string, cell func(n int) string) {
		fmt.Fprintf(tw, "| %s\t| %s\t", label, data)
		for _, n := range cfg.workers {
			fmt.Fprintf(tw, "| %s\t", cell(n))
		}
		fmt.Fprintln(tw, "|")
	}
	for _, j := range jobs {
		t1 := bench.Median(j.times[1])
		row(j.name, sets[j.data], func(n int) string { return fmt.Sprintf("%.3fs", bench.Median(j.times[n])) })
		row("↳ "+j.base.name, "", func(n int) string { return fmt.Sprintf("%.3fs", bench.Median(j.base.times[n])) })
		row("↳ ratio to the baseline", "", func(n int) string {
			return fmt.Sprintf("%.2fx", bench.Median(j.times[n])/bench.Median(j.base.times[n]))
		})
		row("↳ serial part per member", "", func(n int) string {
			if n == 1 || t1 == 0 {
				return "-"
			}
			tn := bench.Median(j.times[n])
			return fmt.Sprintf("%.0f ns (s=%.2f)", serialNsPerMember(t1, tn, n, j.members), serialFraction(t1, tn, n))
		})
	}
	tw.Flush()
	fmt.Fprintln(w, "columns: --workers of itarconv, and processes the baseline runs at once; medians of", cfg.reps, "reps, wall time with process start, page cache warm.")
	fmt.Fprintln(w, "serial part per member: Amdahl's law from the medians at 1 and n workers, s = (T_n/T_1 - 1/n)/(1 - 1/n) clamped to [0,1],")
	fmt.Fprintln(w, "  ns/member = s*T_1/members: the time per member that did not run in parallel (needs the 1-worker column).")
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func find(jobs []*job, name string) *job {
	for _, j := range jobs {
		if j.name == name {
			return j
		}
	}
	return nil
}

// writeFloor times, at each worker count, writing as many bytes as
// `--format all` writes beyond TARIDX alone (zeros, by dd, split among as
// many processes as the workers, into the page cache, unsynced): the least
// the loaders' indexes can cost on this machine, whatever the code that
// encodes them. Medians of reps.
func (e *env) writeFloor(jobs []*job, reps int) (map[int]float64, error) {
	extra := find(jobs, "index --format all").bytes - find(jobs, "index (TARIDX)").bytes
	floor := map[int]float64{}
	if extra <= 0 {
		return floor, nil
	}
	for w := range find(jobs, "index (TARIDX)").times {
		var cmds [][]string
		for k := range w {
			mib := (extra/int64(w) + 1<<20 - 1) >> 20
			cmds = append(cmds, []string{"dd", "if=/dev/zero", "of=" + filepath.Join(e.out, fmt.Sprintf("floor%d", k)), "bs=1M", fmt.Sprint("count=", mib)})
		}
		var ts []float64
		for range reps {
			t, err := runPool(w, cmds)
			if err != nil {
				return nil, err
			}
			if err := e.cleanOut(); err != nil {
				return nil, err
			}
			ts = append(ts, t)
		}
		floor[w] = bench.Median(ts)
	}
	return floor, nil
}

func printTargets(w io.Writer, cfg config, jobs []*job, tinyMembers, kibMembers int, floor map[int]float64) {
	med := func(j *job, n int) float64 { return bench.Median(j.times[n]) }
	has := func(n int) bool { return bench.Median(find(jobs, "index (TARIDX)").times[n]) > 0 }
	maxW := cfg.workers[len(cfg.workers)-1]
	at := 2 // the 2-core targets are at 2 workers, else at the most
	if !has(2) {
		at = maxW
	}
	fmt.Fprintf(w, "targets (issue 26; the 2-core ones are stated for 3M one-byte members (here %d) and 100k of 1-20 KiB (here %d)):\n", tinyMembers, kibMembers)
	line := func(ok bool, format string, args ...any) {
		fmt.Fprintf(w, "  %s  %s\n", bench.Verdict(ok), fmt.Sprintf(format, args...))
	}
	ix, all, bc := find(jobs, "index (TARIDX)"), find(jobs, "index --format all"), find(jobs, "tar -> Barecat")
	if has(1) && has(2) {
		r := med(ix, 2) / med(ix, 1)
		line(r <= 0.6, "index --workers 2 <= 0.6x --workers 1: %.2fx", r)
	}
	r := med(ix, at) / bench.Median(ix.base.times[at])
	line(r <= 0.5, "index --workers %d <= 0.5x tar -tf %d at a time: %.2fx", at, at, r)
	r = med(all, at) / med(ix, at)
	line(r <= 1.3, "index --format all <= 1.3x TARIDX alone (--workers %d): %.2fx", at, r)
	if f := floor[at]; f > 0 {
		fmt.Fprintf(w, "        (writing its %.0f MB beyond TARIDX's, zeros by dd %d at a time, takes %.3f s alone: TARIDX + that = %.2fx TARIDX)\n",
			float64(all.bytes-ix.bytes)/1e6, at, f, (med(ix, at)+f)/med(ix, at))
	}
	r = med(bc, at) / bench.Median(bc.base.times[at])
	line(r <= 1.2, "tar -> Barecat <= 1.2x cat + sync (--workers %d): %.2fx", at, r)
	mg, gzj := find(jobs, fmt.Sprintf("merge of %d index parts", mergeParts)), find(jobs, "gzip shards -> TBL")
	r = med(mg, maxW) / med(ix, maxW)
	line(r <= 0.10, "merge of index parts <= 10%% of one run (index, --workers %d): %.0f%%", maxW, 100*r)
	if has(16) {
		// The 16-core targets, where the machine has the cores.
		if at != 16 {
			r = med(ix, 16) / bench.Median(ix.base.times[16])
			line(r <= 0.5, "index --workers 16 <= 0.5x tar -tf 16 at a time: %.2fx", r)
		}
		if has(1) {
			r = med(ix, 1) / med(ix, 16)
			line(r >= 10, "index --workers 16 >= 10x faster than --workers 1: %.1fx", r)
		}
		r = med(gzj, 16) / bench.Median(gzj.base.times[16])
		line(r <= 1.2, "gzip shards -> TBL --workers 16 <= 1.2x gzip -dc 16 at a time: %.2fx", r)
	}
	if has(1) && maxW > 1 {
		for _, j := range jobs {
			ns := serialNsPerMember(med(j, 1), med(j, maxW), maxW, j.members)
			line(ns <= 30, "%s: serial part <= 30 ns/member (1 and %d workers): %.0f ns", j.name, maxW, ns)
		}
	}
}
