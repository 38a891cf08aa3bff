package main

import (
	"bufio"
	"bytes"
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
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
)

// The targets. RSS is budgeted per member on top of a fixed allowance for
// the Go runtime, the binary and read buffers.
const (
	targetRateA       = 1.0e6 // members/s on dataset A
	targetTarRatio    = 0.5   // itarconv time / tar -tf time, each dataset
	targetRateB       = 2.5e6 // members/s on dataset B
	targetRSSPerMembB = 100   // bytes per member on dataset B ...
	targetRSSBaseB    = 128 << 20
	targetAllRatio    = 1.3 // --format all time / --format taridx time, each dataset
	indexWorkers      = 2
	tarParallel       = 2
)

var strategies = []string{"auto", "mmap", "pread", "sequential"}

func main() {
	os.Exit(run())
}

type config struct {
	dir   string
	reps  int
	quick bool
}

func run() int {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", "", "keep the datasets in this directory and reuse them on later runs (default: a temporary directory, removed afterwards)")
	flag.IntVar(&cfg.reps, "reps", 5, "timed runs per tool and dataset (the median is reported)")
	flag.BoolVar(&cfg.quick, "quick", false, "smoke run: tiny datasets, one rep unless -reps is given")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "indexbench: no arguments expected")
		return 2
	}
	repsSet := false
	flag.Visit(func(f *flag.Flag) { repsSet = repsSet || f.Name == "reps" })
	if cfg.quick && !repsSet {
		cfg.reps = 1
	}
	if cfg.reps < 1 {
		fmt.Fprintln(os.Stderr, "indexbench: -reps must be at least 1")
		return 2
	}
	if err := runBench(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "indexbench: %v\n", err)
		return 1
	}
	return 0
}

// Kinds of measurement.
const (
	kindIndex = iota // itarconv index, one strategy
	kindTar          // the GNU tar baseline
	kindWalk         // the in-process header walk (floor)
)

// measurement is what the repetitions of one tool on one dataset gave.
type measurement struct {
	dataset   bench.Dataset
	kind      int
	tool      string
	strategy  string // itarconv's --read-strategy
	formats   string // itarconv's --format ("" = taridx)
	walls     []float64
	cpus      []float64 // user+sys seconds of the child(ren)
	selfs     []float64 // itarconv's own "seconds" (process start excluded)
	maxRSS    int64     // bytes, the highest peak over all runs
	reads     int64     // read calls of the last run
	readBytes int64
}

func (m *measurement) median() float64 { return bench.Median(m.walls) }
func (m *measurement) rate() float64   { return float64(m.dataset.Members) / m.median() }

func runBench(cfg config) error {
	tmp, err := os.MkdirTemp("", "indexbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	// The temporary datasets take about 2 GiB: an interrupted run must not
	// leave them behind. The children get the terminal's signal themselves.
	bench.RemoveOnInterrupt(tmp)
	dataDir := cfg.dir
	if dataDir == "" {
		dataDir = tmp
	}

	tarPath, err := exec.LookPath("tar")
	if err != nil {
		return fmt.Errorf("the baseline needs GNU tar: %w", err)
	}
	tarVersion := toolVersion(tarPath)
	if !strings.Contains(tarVersion, "GNU tar") {
		return fmt.Errorf("%s is not GNU tar (%q)", tarPath, tarVersion)
	}

	bin := filepath.Join(tmp, "itarconv")
	t0 := time.Now()
	if err := bench.BuildItarconv(bin); err != nil {
		return err
	}
	fmt.Printf("built itarconv in %.1fs; baseline %s\n", time.Since(t0).Seconds(), tarVersion)

	datasets := []bench.Dataset{bench.DatasetA, bench.DatasetB}
	if cfg.quick {
		datasets = []bench.Dataset{bench.DatasetA.Scaled(2_000), bench.DatasetB.Scaled(20_000)}
	}
	dirs := make([]string, len(datasets))
	shards := make([][]string, len(datasets))
	for i, d := range datasets {
		// The member count is in the name so that quick and full runs can
		// share a -dir without regenerating each other's datasets.
		dirs[i] = filepath.Join(dataDir, fmt.Sprintf("%s-%d", d.Name, d.Members))
		t0 := time.Now()
		var reused bool
		shards[i], reused, err = bench.Prepare(d, dirs[i], "indexbench.json")
		if err != nil {
			return err
		}
		what := "generated"
		if reused {
			what = "reused"
		}
		size := int64(0)
		for _, p := range shards[i] {
			if st, err := os.Stat(p); err == nil {
				size += st.Size()
			}
		}
		fmt.Printf("dataset %s: %s %d members in %d shards (%.0f MiB) in %.1fs\n",
			d.Name, what, d.Members, d.Shards, float64(size)/(1<<20), time.Since(t0).Seconds())
	}
	fmt.Printf("%d cores, GOMAXPROCS %d, %d timed runs per tool (after one untimed warm-up run), itarconv --workers %d, tar -tf %d at a time\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.reps, indexWorkers, tarParallel)

	noise := startNoise()
	var all []*measurement
	for i, d := range datasets {
		// Warm the page cache, so that every tool, the first included,
		// reads from memory: the benchmark is about CPU and system calls.
		if err := bench.Warm(shards[i]); err != nil {
			return err
		}
		ms, err := measure(cfg, d, dirs[i], shards[i], bin, tarPath)
		if err != nil {
			return err
		}
		all = append(all, ms...)
	}
	fmt.Println(noise.report())
	fmt.Println()
	printTable(os.Stdout, all)
	fmt.Println()
	printTargets(os.Stdout, all, cfg.quick)
	return nil
}

func toolVersion(path string) string {
	out, _ := exec.Command(path, "--version").Output()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(line)
}

// measure times every tool on one dataset. The repetitions are interleaved
// (each rep runs every tool once) so that a slow phase of the machine hits
// all tools alike instead of one of them.
func measure(cfg config, d bench.Dataset, dir string, shards []string, bin, tarPath string) ([]*measurement, error) {
	var ms []*measurement
	for _, s := range strategies {
		ms = append(ms, &measurement{dataset: d, kind: kindIndex, tool: "itarconv index", strategy: s})
	}
	// Every loader's index from the same pass, beside TARIDX.
	ms = append(ms, &measurement{dataset: d, kind: kindIndex, tool: "itarconv index --format all", strategy: "auto", formats: "all"})
	ms = append(ms,
		&measurement{dataset: d, kind: kindTar, tool: "tar -tf (baseline)"},
		&measurement{dataset: d, kind: kindWalk, tool: "header walk (floor)"})

	// The warm-up run checks results; the timed runs check them again.
	lines, _, err := runTar(tarPath, shards, true)
	if err != nil {
		return nil, err
	}
	if lines != int64(d.Members) {
		return nil, fmt.Errorf("dataset %s: tar -tf listed %d members, %d were generated", d.Name, lines, d.Members)
	}
	for _, m := range ms {
		if m.kind == kindIndex {
			if _, err := runIndex(bin, dir, m.strategy, m.formats, d); err != nil {
				return nil, err
			}
		}
	}
	if _, err := runWalk(d, shards); err != nil {
		return nil, err
	}

	for range cfg.reps {
		for _, m := range ms {
			switch m.kind {
			case kindTar:
				_, r, err := runTar(tarPath, shards, false)
				if err != nil {
					return nil, err
				}
				m.walls = append(m.walls, r.wall)
				m.cpus = append(m.cpus, r.cpu)
				m.maxRSS = max(m.maxRSS, r.rss)
			case kindWalk:
				wall, err := runWalk(d, shards)
				if err != nil {
					return nil, err
				}
				m.walls = append(m.walls, wall)
			case kindIndex:
				r, err := runIndex(bin, dir, m.strategy, m.formats, d)
				if err != nil {
					return nil, err
				}
				m.walls = append(m.walls, r.wall)
				m.cpus = append(m.cpus, r.cpu)
				m.selfs = append(m.selfs, r.self)
				m.maxRSS = max(m.maxRSS, r.rss)
				m.reads, m.readBytes = r.reads, r.readBytes
			}
		}
	}
	return ms, nil
}

// runWalk times the in-process header walk with as many goroutines as the
// indexer has workers, and checks its count.
func runWalk(d bench.Dataset, shards []string) (float64, error) {
	start := time.Now()
	n, err := bench.WalkHeaders(shards, indexWorkers)
	wall := time.Since(start).Seconds()
	if err != nil {
		return 0, err
	}
	if n != int64(d.Members) {
		return 0, fmt.Errorf("dataset %s: the header walk saw %d members, %d were generated", d.Name, n, d.Members)
	}
	return wall, nil
}

// indexRun is one timed `itarconv index`.
type indexRun struct {
	wall, cpu, self  float64
	rss              int64
	reads, readBytes int64
}

// runIndex runs `itarconv index DIR -q --json` (with --format formats, if
// given) and checks that it indexed every generated member, each as a row,
// two rows per stem, and wrote every loader's index of every shard.
func runIndex(bin, dir, strategy, formats string, d bench.Dataset) (indexRun, error) {
	// Every run writes fresh indexes. Replacing an existing one makes the
	// file system free the old file's blocks inside the timed rename, a
	// cost of re-indexing (tens of ms on a file system mounted with
	// discard) that has nothing to do with reading the shards.
	if err := removeIndexes(dir, d.Fold); err != nil {
		return indexRun{}, err
	}
	args := []string{"index", dir, "-q", "--json", "--workers", fmt.Sprint(indexWorkers), "--read-strategy", strategy}
	if formats != "" {
		args = append(args, "--format", formats)
	}
	wall, ps, stdout, err := bench.RunTimed(bin, args...)
	if err != nil {
		return indexRun{}, fmt.Errorf("itarconv index --read-strategy %s on dataset %s: %w", strategy, d.Name, err)
	}
	var out struct {
		Folds []struct {
			Fold      string  `json:"fold"`
			Members   int64   `json:"members"`
			Rows      uint64  `json:"rows"`
			Stems     uint64  `json:"stems"`
			Seconds   float64 `json:"seconds"`
			ReadCalls int64   `json:"read_calls"`
			ReadBytes int64   `json:"read_bytes"`
		} `json:"folds"`
		Loaders *struct {
			Written map[string]int `json:"written"`
		} `json:"loaders"`
	}
	if err := bench.Result(stdout, &out); err != nil {
		return indexRun{}, fmt.Errorf("itarconv index --json on dataset %s: %v in %q", d.Name, err, stdout)
	}
	if len(out.Folds) != 1 || out.Folds[0].Fold != d.Fold {
		return indexRun{}, fmt.Errorf("dataset %s: expected one fold %q, got %+v", d.Name, d.Fold, out.Folds)
	}
	f := out.Folds[0]
	n := int64(d.Members)
	if f.Members != n || f.Rows != uint64(n) || f.Stems != uint64(n/2) {
		return indexRun{}, fmt.Errorf("dataset %s, --read-strategy %s: index has %d members, %d rows, %d stems; generated %d members, %d stems",
			d.Name, strategy, f.Members, f.Rows, f.Stems, n, n/2)
	}
	if formats != "" {
		if out.Loaders == nil || len(out.Loaders.Written) == 0 {
			return indexRun{}, fmt.Errorf("dataset %s, --format %s: no loader's index written", d.Name, formats)
		}
		// A file per shard, and the dataset's: energon's four in .nv-meta,
		// wids' one.
		want := map[string]int{"energon": d.Shards + 4, "wids": 1, "dali": d.Shards, "ratarmount": d.Shards}
		for name, n := range want {
			if got := out.Loaders.Written[name]; got != n {
				return indexRun{}, fmt.Errorf("dataset %s: %d %s index files, want %d", d.Name, got, name, n)
			}
		}
	}
	return indexRun{wall: wall, cpu: bench.CPUSeconds(ps), self: f.Seconds, rss: bench.MaxRSS(ps),
		reads: f.ReadCalls, readBytes: f.ReadBytes}, nil
}

// runTar lists the shards with GNU tar, tarParallel processes at a time as
// `xargs -P2 -n1 tar -tf` would. With count it returns how many names were
// listed; otherwise the listing goes to /dev/null, as in the timed runs.
// The CPU time is the sum over the processes, the RSS the highest peak.
func runTar(tarPath string, shards []string, count bool) (lines int64, r indexRun, err error) {
	var mu sync.Mutex
	var firstErr error
	next := make(chan string)
	var wg sync.WaitGroup
	start := time.Now()
	for range tarParallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for shard := range next {
				cmd := exec.Command(tarPath, "-tf", shard)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				var lc lineCounter
				if count {
					cmd.Stdout = &lc
				} // else nil: the child writes to /dev/null
				err := cmd.Run()
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = fmt.Errorf("tar -tf %s: %v\n%s", shard, err, stderr.Bytes())
				}
				if cmd.ProcessState != nil {
					r.rss = max(r.rss, bench.MaxRSS(cmd.ProcessState))
					r.cpu += bench.CPUSeconds(cmd.ProcessState)
				}
				lines += lc.n
				mu.Unlock()
			}
		}()
	}
	for _, s := range shards {
		next <- s
	}
	close(next)
	wg.Wait()
	r.wall = time.Since(start).Seconds()
	return lines, r, firstErr
}

type lineCounter struct{ n int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += int64(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// noiseMeter tells how much CPU other processes took while the timed runs
// went on: the machine's busy time (/proc/stat) less what this program and
// its children used (rusage). Timings taken beside other work are slower
// and noisier, and the comparison with the baseline only roughly fair.
type noiseMeter struct {
	start       time.Time
	busy0, own0 float64
	ok          bool
}

func startNoise() noiseMeter {
	busy, err := bench.MachineBusy()
	return noiseMeter{start: time.Now(), busy0: busy, own0: bench.OwnCPU(), ok: err == nil}
}

func (n noiseMeter) report() string {
	busy, err := bench.MachineBusy()
	if !n.ok || err != nil {
		return "other load on the machine: unknown (no /proc/stat)"
	}
	wall := time.Since(n.start).Seconds()
	other := max(0, (busy-n.busy0)-(bench.OwnCPU()-n.own0))
	verdict := "quiet"
	if share := other / (wall * float64(runtime.NumCPU())); share > 0.10 {
		verdict = "BUSY: figures are skewed, run again on a quiet machine"
	}
	return fmt.Sprintf("other processes used %.1f CPU-seconds during the %.1fs of timed runs (%.0f%% of the machine): %s",
		other, wall, 100*other/(wall*float64(runtime.NumCPU())), verdict)
}

func rate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.0fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

func printTable(w io.Writer, ms []*measurement) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "dataset\ttool\tstrategy\tmedian s\tmin-max s\tmembers/s\tpeak RSS MiB\tRSS B/member\tcpu s\tself s\treads\tread MiB\t")
	for _, m := range ms {
		strategy, rss, perMember, cpu, self, reads, readMiB := "-", "-", "-", "-", "-", "-", "-"
		if m.kind != kindWalk {
			rss = fmt.Sprintf("%.1f", float64(m.maxRSS)/(1<<20))
			perMember = fmt.Sprintf("%.1f", float64(m.maxRSS)/float64(m.dataset.Members))
			cpu = fmt.Sprintf("%.3f", bench.Median(m.cpus))
		}
		if m.kind == kindIndex {
			strategy = m.strategy
			self = fmt.Sprintf("%.3f", bench.Median(m.selfs))
			reads = fmt.Sprint(m.reads)
			readMiB = fmt.Sprintf("%.0f", float64(m.readBytes)/(1<<20))
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.3f\t%.3f-%.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n",
			m.dataset.Name, m.tool, strategy, m.median(), slices.Min(m.walls), slices.Max(m.walls),
			rate(m.rate()), rss, perMember, cpu, self, reads, readMiB)
	}
	tw.Flush()
	fmt.Fprintln(bw, "median/min-max s: wall time of the whole run as this program sees it, process start included;")
	fmt.Fprintln(bw, "members/s = members / median s; peak RSS: the highest of all runs (for tar, of its processes);")
	fmt.Fprintln(bw, "cpu s: median user+sys of the child(ren); self s: itarconv's own \"seconds\" (process start excluded);")
	fmt.Fprintln(bw, "header walk: in-process, hops between headers and verifies them, nothing else (the floor of any header reader).")
}

// removeIndexes removes the indexes an earlier run wrote in dir: the
// fold's TARIDX and every loader's (files beside the shards, and energon's
// .nv-meta directory).
func removeIndexes(dir, fold string) error {
	if err := os.Remove(filepath.Join(dir, fold+".taridx")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if n == ".nv-meta" || n == "shardindex.json" || strings.HasSuffix(n, ".idx") || strings.HasSuffix(n, ".index.sqlite") {
			if err := os.RemoveAll(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// printTargets checks every strategy against the targets: auto is what
// users get, the others show whether a forced strategy would meet them.
func printTargets(w io.Writer, ms []*measurement, quick bool) {
	find := func(name string, kind int, strategy string) *measurement {
		for _, m := range ms {
			if m.dataset.Name == name && m.kind == kind && m.strategy == strategy && m.formats == "" {
				return m
			}
		}
		return nil
	}
	if quick {
		fmt.Fprintln(w, "targets (-quick: tiny datasets, so the verdicts mean little):")
	} else {
		fmt.Fprintln(w, "targets:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	tarA := find("A", kindTar, "")
	for _, s := range strategies {
		if m := find("A", kindIndex, s); m != nil && tarA != nil {
			fmt.Fprintf(tw, "  A %s\tmembers/s >= %s\t%s\t%s\n", s, rate(targetRateA), rate(m.rate()), bench.Verdict(m.rate() >= targetRateA))
			ratio := m.median() / tarA.median()
			fmt.Fprintf(tw, "  A %s\ttime < %.1f x tar -tf\t%.3fs / %.3fs = %.2fx\t%s\n", s, targetTarRatio,
				m.median(), tarA.median(), ratio, bench.Verdict(ratio < targetTarRatio))
		}
	}
	for _, s := range strategies {
		if m := find("B", kindIndex, s); m != nil {
			fmt.Fprintf(tw, "  B %s\tmembers/s >= %s\t%s\t%s\n", s, rate(targetRateB), rate(m.rate()), bench.Verdict(m.rate() >= targetRateB))
			if tarB := find("B", kindTar, ""); tarB != nil {
				ratio := m.median() / tarB.median()
				fmt.Fprintf(tw, "  B %s\ttime < %.1f x tar -tf\t%.3fs / %.3fs = %.2fx\t%s\n", s, targetTarRatio,
					m.median(), tarB.median(), ratio, bench.Verdict(ratio < targetTarRatio))
			}
			budget := float64(targetRSSPerMembB)*float64(m.dataset.Members) + targetRSSBaseB
			fmt.Fprintf(tw, "  B %s\tpeak RSS < %d B/member + %d MiB = %.1f MiB\t%.1f MiB\t%s\n", s, targetRSSPerMembB, targetRSSBaseB>>20,
				budget/(1<<20), float64(m.maxRSS)/(1<<20), bench.Verdict(float64(m.maxRSS) < budget))
		}
	}
	for _, name := range []string{"A", "B"} {
		alone := find(name, kindIndex, "auto")
		for _, m := range ms {
			if m.dataset.Name == name && m.formats != "" && alone != nil {
				ratio := m.median() / alone.median()
				fmt.Fprintf(tw, "  %s --format %s\ttime <= %.1f x TARIDX alone\t%.3fs / %.3fs = %.2fx\t%s\n", name, m.formats, targetAllRatio,
					m.median(), alone.median(), ratio, bench.Verdict(ratio <= targetAllRatio))
			}
		}
	}
	tw.Flush()
	if walk := find("A", kindWalk, ""); walk != nil && tarA != nil {
		fmt.Fprintf(w, "for scale: the bare header walk of A takes %.2fx the tar -tf time (%.3fs, in-process, no process start).\n",
			walk.median()/tarA.median(), walk.median())
	}
}
