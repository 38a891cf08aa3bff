package main

import (
	"bufio"
	"bytes"
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
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
	_ "github.com/itarconv/itarconv/convert" // links every format into the registry
	"github.com/itarconv/itarconv/formats/barecat"
	"github.com/itarconv/itarconv/formats/registry"
)

// The targets.
const (
	targetCopyRatio    = 2.0   // convert DIR X.barecat time / cat time
	targetWrapRate     = 300e3 // files/s of convert --wrap
	targetReverseRatio = 2.0   // convert X.barecat DIR time / cat time of the Barecat shards
	targetTBLRatio     = 2.0   // convert DIR X.tbl (v2, raw) time / cat time of the tar shards
	targetTBLRevRatio  = 2.0   // convert X.tbl DIR time / cat time of the .tbl file
	targetPairRatio    = 1.5   // Barecat <-> TBL directly: time / cat time of the input
	// The peak RSS of a TBL conversion of the whole dataset may exceed that
	// of an eighth of it by this factor plus rssSlack (the TBL index of 24
	// bytes a sample, GC jitter) and still count as flat.
	rssGrowth = 1.25
	rssSlack  = 16 << 20
)

// formatTargets are the targets of registered formats, both ways: time /
// cat time of the input (issue 29).
var formatTargets = map[string]float64{"parquet": 1.5, "mds": 1.2}

// Figures of upstream barecat (isarandi/barecat) as measured on this kind
// of machine (2 cores), on the same kind of dataset. They are context only:
// this program does not run upstream barecat.
const (
	upstreamCopyRate    = 9.3e3 // files/s, tar -> barecat
	upstreamWrapRate    = 22e3  // files/s, tar -> barecat, wrapping
	upstreamReverseRate = 23e3  // files/s, barecat -> tar
)

// Figures of upstream TurboLoader's converters as measured on this kind of
// machine, for context only. Its v1 tool slows quadratically with the
// sample count and holds all the data in RAM.
const (
	upstreamTBLv1Rate = 11e3 // samples/s, tar -> TBL v1 tool
	upstreamTBLv2Rate = 5e3  // samples/s, tar -> TBL v2 tool
)

func main() {
	os.Exit(run())
}

type config struct {
	dir   string
	reps  int
	quick bool
	quiet time.Duration
	only  map[string]bool // groups of directions to run: "barecat", "tbl"
}

// groups are the values of -only: the directions with tools of their
// own here, then every registered format that can be created and opened
// (Parquet, MDS, ...), benchmarked both ways by name (tar -> NAME and NAME
// -> tar, each beside cat of its input).
var groups = append([]string{"barecat", "tbl", "pairs"}, registeredGroups()...)

// registeredGroups are the registered formats that -only takes by name.
func registeredGroups() []string {
	var out []string
	for _, f := range registry.All() {
		if f.Create != nil && f.Open != nil && !slices.Contains([]string{"tar", "barecat", "tbl", "scdl"}, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// isRegistered tells whether a group is a registered format's.
func isRegistered(g string) bool { return slices.Contains(registeredGroups(), g) }

func run() int {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", "", "keep the dataset in this directory and reuse it on later runs (default: a temporary directory, removed afterwards)")
	flag.IntVar(&cfg.reps, "reps", 5, "timed runs per tool (the median is reported)")
	flag.BoolVar(&cfg.quick, "quick", false, "smoke run: a tiny dataset, one rep unless -reps is given")
	flag.DurationVar(&cfg.quiet, "quiet-wait", time.Minute, "before each rep, wait up to this long for other processes to leave the CPUs idle (0: do not wait)")
	only := flag.String("only", strings.Join(groups, ","), "run only these directions, a comma-separated list of: "+strings.Join(groups, ", ")+" (tar <-> Barecat, tar <-> TBL, Barecat <-> TBL directly)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "convbench: no arguments expected")
		return 2
	}
	repsSet := false
	flag.Visit(func(f *flag.Flag) { repsSet = repsSet || f.Name == "reps" })
	if cfg.quick && !repsSet {
		cfg.reps = 1
	}
	if cfg.reps < 1 {
		fmt.Fprintln(os.Stderr, "convbench: -reps must be at least 1")
		return 2
	}
	cfg.only = map[string]bool{}
	for _, g := range strings.Split(*only, ",") {
		g = strings.TrimSpace(g)
		if !slices.Contains(groups, g) {
			fmt.Fprintf(os.Stderr, "convbench: -only: %q is not one of %s\n", g, strings.Join(groups, ", "))
			return 2
		}
		cfg.only[g] = true
	}
	if err := runBench(cfg); err != nil {
		fmt.Fprintf(os.Stderr, "convbench: %v\n", err)
		return 1
	}
	return 0
}

// Directions of conversion.
const (
	toBarecat = "tar -> barecat"
	toTar     = "barecat -> tar"
	toTBL     = "tar -> tbl v2"
	tblToTar  = "tbl v2 -> tar"
	bcToTBL   = "barecat -> tbl v2"
	tblToBc   = "tbl v2 -> barecat"
)

// Kinds of measurement.
const (
	kindCat          = iota // the cat baseline of a direction
	kindCopy                // convert DIR X.barecat
	kindWrap                // convert --wrap DIR X.barecat
	kindReverse             // convert X.barecat DIR --order ...
	kindTBL                 // convert DIR X.tbl (v2, raw)
	kindTBLLZ4              // convert --lz4 DIR X.tbl
	kindTBLReverse          // convert X.tbl DIR
	kindBarecatToTBL        // convert X.barecat Y.tbl (no tar between)
	kindTBLToBarecat        // convert X.tbl Y.barecat
	kindToFormat            // convert --to NAME DIR X (a registered format)
	kindFromFormat          // convert --to tar X DIR
)

// smallInput, as the order of runConvert, has a TBL conversion read the
// dataset scaled down to an eighth: the input of the RSS check.
const smallInput = "small"

// Inputs of the cat baselines.
const (
	catTar     = "tar"
	catBarecat = "barecat"
	catTBL     = "tbl"
	catFormat  = "format" // the files of a registered format's source
)

// measurement is what the repetitions of one tool gave.
type measurement struct {
	direction string
	kind      int
	tool      string
	order     string       // --order of kindReverse
	cat       string       // the input of kindCat: catTar, catBarecat, catTBL
	base      *measurement // the cat baseline this tool is compared with (nil for cat)
	files     int64        // files converted (or, for cat, in the input)
	inBytes   int64        // bytes of the input files (tar shards, Barecat shards)
	walls     []float64
	cpus      []float64 // user+sys seconds of the child(ren)
	maxRSS    int64     // bytes, the highest peak over all runs
	smallRSS  int64     // TBL: peak RSS of the untimed run on an eighth of the data
	format    string    // kindToFormat, kindFromFormat, catFormat: the registered format
}

func (m *measurement) median() float64 { return bench.Median(m.walls) }
func (m *measurement) rate() float64   { return float64(m.files) / m.median() }
func (m *measurement) mbps() float64   { return float64(m.inBytes) / 1e6 / m.median() }

// job is everything a run needs to know.
type job struct {
	d       bench.Dataset
	bin     string
	dataDir string   // the tar shards
	shards  []string // their paths
	tarSize int64
	work    string   // outputs go here
	src     string   // the Barecat archive the reverse direction reads
	srcShs  []string // its shards
	srcSize int64
	tblSrc  string // the TBL file the TBL reverse direction reads
	tblSize int64
	// For the RSS check: the dataset scaled down to an eighth (as many
	// shards, so as many workers), and a TBL file made from it.
	smallDir, smallTBL string
	smallShards        []string
	smallN             int64 // members in smallDir
	// The source of each registered format's reverse direction, made once,
	// and its files.
	fmtSrc   map[string]string
	fmtFiles map[string][]string
}

func runBench(cfg config) error {
	tmp, err := os.MkdirTemp("", "convbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dataDir := cfg.dir
	if dataDir == "" {
		dataDir = tmp
	}
	// The outputs sit beside the dataset, on its file system (a wrapped
	// archive links to the shards). They take about 2 GiB: an interrupted
	// run must not leave them behind. The children get the terminal's
	// signal themselves.
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp(dataDir, "convbench-work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bench.RemoveOnInterrupt(work, tmp)

	bin := filepath.Join(tmp, "itarconv")
	t0 := time.Now()
	if err := bench.BuildItarconv(bin); err != nil {
		return err
	}
	fmt.Printf("built itarconv in %.1fs\n", time.Since(t0).Seconds())

	d := bench.DatasetA
	if cfg.quick {
		d = d.Scaled(2_000)
	}
	// The member count is in the name so that quick and full runs can share
	// a -dir without regenerating each other's datasets.
	j := &job{d: d, bin: bin, dataDir: filepath.Join(dataDir, fmt.Sprintf("convbench-%s-%d", d.Name, d.Members)), work: work}
	t0 = time.Now()
	var reused bool
	j.shards, reused, err = bench.Prepare(d, j.dataDir, "convbench.json")
	if err != nil {
		return err
	}
	j.tarSize = totalSize(j.shards)
	what := "generated"
	if reused {
		what = "reused"
	}
	fmt.Printf("dataset %s: %s %d members in %d shards (%.0f MiB) in %.1fs\n",
		d.Name, what, d.Members, d.Shards, float64(j.tarSize)/(1<<20), time.Since(t0).Seconds())

	// Each reverse direction reads one archive made once, untimed.
	if cfg.only["barecat"] || cfg.only["pairs"] {
		j.src = filepath.Join(work, "src.barecat")
		if _, err := runConvert(j, kindCopy, j.src, "", true); err != nil {
			return err
		}
		j.srcShs, _ = filepath.Glob(j.src + "-shard-*")
		j.srcSize = totalSize(j.srcShs)
		fmt.Printf("source archive for %s: %d shard(s), %.0f MiB\n", toTar, len(j.srcShs), float64(j.srcSize)/(1<<20))
	}
	if cfg.only["tbl"] || cfg.only["pairs"] {
		j.tblSrc = filepath.Join(work, "src.tbl")
		if _, err := runConvert(j, kindTBL, j.tblSrc, "", true); err != nil {
			return err
		}
		j.tblSize = totalSize([]string{j.tblSrc})
		fmt.Printf("source file for %s: %.0f MiB\n", tblToTar, float64(j.tblSize)/(1<<20))
		// The RSS check's input: the same dataset with an eighth of the
		// members in as many shards, so that the conversion runs with as
		// many workers and only the data's size differs; and a TBL file
		// made from it.
		small := d.Scaled(d.Members / 8)
		j.smallDir, j.smallN = filepath.Join(dataDir, fmt.Sprintf("convbench-%s-%d", small.Name, small.Members)), int64(small.Members)
		if j.smallShards, _, err = bench.Prepare(small, j.smallDir, "convbench.json"); err != nil {
			return err
		}
		j.smallTBL = filepath.Join(work, "small.tbl")
		if _, err := runConvert(j, kindTBL, j.smallTBL, smallInput, true); err != nil {
			return err
		}
	}
	j.fmtSrc, j.fmtFiles = map[string]string{}, map[string][]string{}
	for _, g := range groups {
		if !cfg.only[g] || !isRegistered(g) {
			continue
		}
		j.fmtSrc[g] = filepath.Join(work, "src."+g)
		if _, err := runConvertFormat(j, kindToFormat, g, j.fmtSrc[g], true); err != nil {
			return err
		}
		j.fmtFiles[g] = filesUnder(j.fmtSrc[g])
		fmt.Printf("source for %s -> tar: %d file(s), %.0f MiB\n", g, len(j.fmtFiles[g]), float64(totalSize(j.fmtFiles[g]))/(1<<20))
	}
	fmt.Printf("%d cores, GOMAXPROCS %d, %d timed runs per tool (after one untimed warm-up run that checks the outputs), itarconv default --workers\n\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.reps)

	// Warm the page cache, so that every tool, the first included, reads
	// from memory: what is timed is the conversion and the writeback.
	toWarm := append(slices.Clone(j.shards), j.srcShs...)
	for _, files := range j.fmtFiles {
		toWarm = append(toWarm, files...)
	}
	if j.tblSrc != "" {
		toWarm = append(toWarm, j.tblSrc)
	}
	if j.smallTBL != "" {
		toWarm = append(toWarm, j.smallTBL)
		toWarm = append(toWarm, j.smallShards...)
	}
	if err := bench.Warm(toWarm); err != nil {
		return err
	}
	n := int64(d.Members)
	// One cat of the tar shards is the baseline of every conversion from tar.
	var fromTar []string
	for _, g := range groups {
		if cfg.only[g] {
			fromTar = append(fromTar, g)
		}
	}
	catTarM := &measurement{direction: "tar -> " + strings.Join(fromTar, ", "), kind: kindCat, cat: catTar, tool: "cat tar shards > f && sync f (baseline)", files: n, inBytes: j.tarSize}
	ms := []*measurement{catTarM}
	if cfg.only["barecat"] {
		ms = append(ms,
			&measurement{direction: toBarecat, kind: kindCopy, tool: "itarconv convert DIR X.barecat", files: n, inBytes: j.tarSize, base: catTarM},
			&measurement{direction: toBarecat, kind: kindWrap, tool: "itarconv convert --wrap DIR X.barecat", files: n, inBytes: j.tarSize, base: catTarM},
		)
	}
	if cfg.only["tbl"] {
		ms = append(ms,
			&measurement{direction: toTBL, kind: kindTBL, tool: "itarconv convert DIR X.tbl", files: n, inBytes: j.tarSize, base: catTarM},
			&measurement{direction: toTBL, kind: kindTBLLZ4, tool: "itarconv convert --lz4 DIR X.tbl", files: n, inBytes: j.tarSize, base: catTarM},
		)
	}
	if cfg.only["barecat"] {
		catBc := &measurement{direction: toTar, kind: kindCat, cat: catBarecat, tool: "cat barecat shards > f && sync f (baseline)", files: n, inBytes: j.srcSize}
		ms = append(ms, catBc,
			&measurement{direction: toTar, kind: kindReverse, order: "path", tool: "itarconv convert X.barecat DIR --order path", files: n, inBytes: j.srcSize, base: catBc},
			&measurement{direction: toTar, kind: kindReverse, order: "address", tool: "itarconv convert X.barecat DIR --order address", files: n, inBytes: j.srcSize, base: catBc},
		)
	}
	if cfg.only["tbl"] {
		catT := &measurement{direction: tblToTar, kind: kindCat, cat: catTBL, tool: "cat X.tbl > f && sync f (baseline)", files: n, inBytes: j.tblSize}
		ms = append(ms, catT,
			&measurement{direction: tblToTar, kind: kindTBLReverse, tool: "itarconv convert X.tbl DIR", files: n, inBytes: j.tblSize, base: catT},
		)
	}

	for _, g := range groups {
		if !cfg.only[g] || !isRegistered(g) {
			continue
		}
		size := totalSize(j.fmtFiles[g])
		catF := &measurement{direction: g + " -> tar", kind: kindCat, cat: catFormat, format: g, tool: "cat " + g + " files > f && sync f (baseline)", files: n, inBytes: size}
		ms = append(ms,
			&measurement{direction: "tar -> " + g, kind: kindToFormat, format: g, tool: "itarconv convert --to " + g + " DIR X", files: n, inBytes: j.tarSize, base: catTarM},
			catF,
			&measurement{direction: g + " -> tar", kind: kindFromFormat, format: g, tool: "itarconv convert --to tar X DIR", files: n, inBytes: size, base: catF},
		)
	}
	if cfg.only["pairs"] {
		catBc := &measurement{direction: bcToTBL, kind: kindCat, cat: catBarecat, tool: "cat barecat shards > f && sync f (baseline)", files: n, inBytes: j.srcSize}
		catT := &measurement{direction: tblToBc, kind: kindCat, cat: catTBL, tool: "cat X.tbl > f && sync f (baseline)", files: n, inBytes: j.tblSize}
		ms = append(ms, catBc,
			&measurement{direction: bcToTBL, kind: kindBarecatToTBL, tool: "itarconv convert X.barecat Y.tbl", files: n, inBytes: j.srcSize, base: catBc},
			catT,
			&measurement{direction: tblToBc, kind: kindTBLToBarecat, tool: "itarconv convert X.tbl Y.barecat", files: n, inBytes: j.tblSize, base: catT},
		)
	}

	// Warm-up: every tool once, untimed, outputs checked.
	for _, m := range ms {
		if _, err := runOne(j, m, true); err != nil {
			return err
		}
	}
	fmt.Println("checks: every output holds", d.Members, "files (Barecat: counted in its index; TBL: samples of `itarconv inspect --json`; tar: `itarconv inspect` rows of the fold's TARIDX)")

	// The RSS check: every TBL conversion once more, untimed, on an eighth
	// of the data.
	if cfg.only["tbl"] {
		for _, m := range ms {
			if m.kind != kindTBL && m.kind != kindTBLLZ4 && m.kind != kindTBLReverse {
				continue
			}
			out := filepath.Join(j.work, "small-out")
			if m.kind != kindTBLReverse {
				out += ".tbl"
			}
			r, err := runConvert(j, m.kind, out, smallInput, true)
			if err != nil {
				return err
			}
			m.smallRSS = r.rss
			if err := clean(out); err != nil {
				return err
			}
		}
		fmt.Printf("RSS check: each TBL conversion also ran once, untimed, on the dataset scaled to an eighth (%d members, as many shards)\n", j.smallN)
	}

	// The repetitions are interleaved (each rep runs every tool once) so
	// that a slow phase of the machine hits all tools alike. On a shared
	// machine each rep waits for a quiet moment first; the noise meter
	// then counts the load during the timed runs only.
	var noise bench.NoiseMeter
	var waited time.Duration
	busyStarts := 0
	for range cfg.reps {
		w, quiet := bench.WaitQuiet(cfg.quiet)
		waited += w
		if !quiet {
			busyStarts++
		}
		noise.Resume()
		for _, m := range ms {
			r, err := runOne(j, m, false)
			if err != nil {
				return err
			}
			m.walls = append(m.walls, r.wall)
			m.cpus = append(m.cpus, r.cpu)
			m.maxRSS = max(m.maxRSS, r.rss)
		}
		noise.Pause()
	}
	if cfg.quiet > 0 {
		fmt.Printf("waited %.1fs in all for a quiet machine before the reps; %d of %d reps started with other processes still busy\n",
			waited.Seconds(), busyStarts, cfg.reps)
	}
	fmt.Println(noise.Report("timed runs"))
	fmt.Println()
	printTable(os.Stdout, ms)
	fmt.Println()
	printTargets(os.Stdout, ms, cfg.quick, j.smallN)
	return nil
}

// runResult is one timed run.
type runResult struct {
	wall, cpu float64
	rss       int64
}

// runOne runs tool m once, checks its output when check is set, and
// removes the output (untimed).
func runOne(j *job, m *measurement, check bool) (runResult, error) {
	var out string
	var r runResult
	var err error
	switch m.kind {
	case kindCat:
		out = filepath.Join(j.work, "cat.out")
		files := j.shards
		switch m.cat {
		case catBarecat:
			files = j.srcShs
		case catTBL:
			files = []string{j.tblSrc}
		case catFormat:
			files = j.fmtFiles[m.format]
		}
		r, err = runCat(files, out)
	case kindToFormat:
		out = filepath.Join(j.work, "out."+m.format)
		r, err = runConvertFormat(j, m.kind, m.format, out, check)
	case kindFromFormat:
		out = filepath.Join(j.work, "out-"+m.format)
		r, err = runConvertFormat(j, m.kind, m.format, out, check)
	case kindCopy, kindWrap:
		out = filepath.Join(j.work, "out.barecat")
		r, err = runConvert(j, m.kind, out, "", check)
	case kindReverse:
		out = filepath.Join(j.work, "out-"+m.order)
		r, err = runConvert(j, m.kind, out, m.order, check)
	case kindTBL, kindTBLLZ4:
		out = filepath.Join(j.work, "out.tbl")
		r, err = runConvert(j, m.kind, out, "", check)
	case kindTBLReverse:
		out = filepath.Join(j.work, "out-tbl")
		r, err = runConvert(j, m.kind, out, "", check)
	case kindBarecatToTBL:
		out = filepath.Join(j.work, "pair.tbl")
		r, err = runConvert(j, m.kind, out, "", check)
	case kindTBLToBarecat:
		out = filepath.Join(j.work, "pair.barecat")
		r, err = runConvert(j, m.kind, out, "", check)
	}
	if err != nil {
		return r, err
	}
	return r, clean(out)
}

// clean removes an output (a file, a directory, or an archive's index and
// shards) and then syncs the file system, so that the next timed run does
// not pay for this one's unlinks in its own fsync.
func clean(out string) error {
	paths, _ := filepath.Glob(out + "-shard-*")
	paths = append(paths, out)
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	syscall.Sync()
	return nil
}

// runCat copies files into out and fsyncs it, in one shell: the baseline.
func runCat(files []string, out string) (runResult, error) {
	args := append([]string{"-c", `cat "$@" > "$0" && sync "$0"`, out}, files...)
	cmd := exec.Command("sh", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		return runResult{}, fmt.Errorf("cat > %s && sync: %v\n%s", out, err, stderr.Bytes())
	}
	return runResult{wall: wall, cpu: bench.CPUSeconds(cmd.ProcessState), rss: bench.MaxRSS(cmd.ProcessState)}, nil
}

// runConvert runs one `itarconv convert -q --json` into out. With check it
// verifies the output: a Barecat archive is opened and its files counted; a
// TBL file's samples and a tar fold's index are read back with `itarconv
// inspect --json`. For the TBL kinds, order smallInput converts an eighth
// of the data (j.smallDir, j.smallTBL) instead of the whole dataset.
func runConvert(j *job, kind int, out, order string, check bool) (runResult, error) {
	var args []string
	n := int64(j.d.Members)
	tarIn, tblIn := j.dataDir, j.tblSrc
	if order == smallInput {
		n, tarIn, tblIn = j.smallN, j.smallDir, j.smallTBL
	}
	switch kind {
	case kindCopy:
		args = []string{"convert", "-q", "--json", j.dataDir, out}
	case kindWrap:
		args = []string{"convert", "-q", "--json", "--wrap", j.dataDir, out}
	case kindReverse:
		args = []string{"convert", "-q", "--json", j.src, out, "--order", order}
	case kindTBL:
		args = []string{"convert", "-q", "--json", tarIn, out}
	case kindTBLLZ4:
		args = []string{"convert", "-q", "--json", "--lz4", tarIn, out}
	case kindTBLReverse:
		args = []string{"convert", "-q", "--json", "--fold", j.d.Fold, tblIn, out}
	case kindBarecatToTBL:
		args = []string{"convert", "-q", "--json", j.src, out}
	case kindTBLToBarecat:
		args = []string{"convert", "-q", "--json", tblIn, out}
	}
	r, stdout, what, err := timeItarconv(j.bin, args)
	if err != nil {
		return r, err
	}
	if kind == kindTBL || kind == kindTBLLZ4 || kind == kindBarecatToTBL {
		var st struct{ Samples int64 }
		if err := bench.Result(stdout.Bytes(), &st); err != nil {
			return r, fmt.Errorf("%s: %v in %q", what, err, stdout.Bytes())
		}
		if st.Samples != n {
			return r, fmt.Errorf("%s: wrote %d samples, %d members were generated", what, st.Samples, n)
		}
		if check {
			samples, err := inspectTBL(j.bin, out)
			if err != nil {
				return r, err
			}
			if samples != n {
				return r, fmt.Errorf("%s: the TBL file holds %d samples, %d members were generated", what, samples, n)
			}
		}
		return r, nil
	}
	if kind == kindReverse || kind == kindTBLReverse {
		var st struct {
			Members int64
			Index   struct{ Rows int64 }
		}
		if err := bench.Result(stdout.Bytes(), &st); err != nil {
			return r, fmt.Errorf("%s: %v in %q", what, err, stdout.Bytes())
		}
		if st.Members != n || st.Index.Rows != n {
			return r, fmt.Errorf("%s: wrote %d members, %d index rows; the archive holds %d files", what, st.Members, st.Index.Rows, n)
		}
		if check {
			rows, err := inspectRows(j.bin, filepath.Join(out, j.d.Fold+".taridx"))
			if err != nil {
				return r, err
			}
			if rows != n {
				return r, fmt.Errorf("%s: the fold's TARIDX has %d rows, want %d", what, rows, n)
			}
		}
		return r, nil
	}
	var st struct{ Files int64 }
	if err := bench.Result(stdout.Bytes(), &st); err != nil {
		return r, fmt.Errorf("%s: %v in %q", what, err, stdout.Bytes())
	}
	if st.Files != n {
		return r, fmt.Errorf("%s: converted %d files, %d members were generated", what, st.Files, n)
	}
	if check {
		files, err := countBarecat(out)
		if err != nil {
			return r, fmt.Errorf("%s: %w", what, err)
		}
		if files != n {
			return r, fmt.Errorf("%s: the archive holds %d files, %d members were generated", what, files, n)
		}
	}
	return r, nil
}

// timeItarconv runs bin with args once, timed, and returns its figures,
// its standard output and the command line as messages show it.
func timeItarconv(bin string, args []string) (runResult, *bytes.Buffer, string, error) {
	wall, ps, stdout, err := bench.RunTimed(bin, args...)
	what := "itarconv " + strings.Join(args, " ")
	if err != nil {
		return runResult{}, nil, what, fmt.Errorf("%s: %w", what, err)
	}
	return runResult{wall: wall, cpu: bench.CPUSeconds(ps), rss: bench.MaxRSS(ps)}, bytes.NewBuffer(stdout), what, nil
}

// runConvertFormat runs one `itarconv convert -q --json` between the tar
// shards and a registered format, into out: tar -> format (kindToFormat)
// or the format's source -> tar (kindFromFormat). It checks the member
// count the result gives and, with check, reads the output back: the
// format's with `itarconv ls`, a tar fold's index with `itarconv inspect`.
func runConvertFormat(j *job, kind int, format, out string, check bool) (runResult, error) {
	args := []string{"convert", "-q", "--json", "--to", format, j.dataDir, out}
	if kind == kindFromFormat {
		args = []string{"convert", "-q", "--json", "--from", format, "--to", "tar", "--fold", j.d.Fold, j.fmtSrc[format], out}
	}
	r, stdout, what, err := timeItarconv(j.bin, args)
	if err != nil {
		return r, err
	}
	n := int64(j.d.Members)
	var st struct{ Members int64 }
	if err := bench.Result(stdout.Bytes(), &st); err != nil {
		return r, fmt.Errorf("%s: %v in %q", what, err, stdout.Bytes())
	}
	if st.Members != n {
		return r, fmt.Errorf("%s: wrote %d members, %d were generated", what, st.Members, n)
	}
	if !check {
		return r, nil
	}
	if kind == kindFromFormat {
		rows, err := inspectRows(j.bin, filepath.Join(out, j.d.Fold+".taridx"))
		if err != nil {
			return r, err
		}
		if rows != n {
			return r, fmt.Errorf("%s: the fold's TARIDX has %d rows, want %d", what, rows, n)
		}
		return r, nil
	}
	ls, err := exec.Command(j.bin, "ls", out).Output()
	if err != nil {
		return r, fmt.Errorf("itarconv ls %s: %v", out, err)
	}
	if got := int64(bytes.Count(ls, []byte("\n"))); got != n {
		return r, fmt.Errorf("itarconv ls %s: %d members, %d were generated", out, got, n)
	}
	return r, nil
}

// filesUnder lists the files of a path: itself, or those below it.
func filesUnder(path string) []string {
	var out []string
	filepath.Walk(path, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// countBarecat opens an archive and counts the rows of its files table.
func countBarecat(path string) (int64, error) {
	a, err := barecat.Open(path)
	if err != nil {
		return 0, err
	}
	defer a.Close()
	var n int64
	err = a.Files(context.Background(), barecat.ByAddress, func(barecat.File) error { n++; return nil })
	return n, err
}

// inspectRows reads the row count of a TARIDX with `itarconv inspect`.
func inspectRows(bin, idx string) (int64, error) {
	out, err := exec.Command(bin, "inspect", "--json", idx).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return 0, fmt.Errorf("itarconv inspect --json %s: %v\n%s", idx, err, ee.Stderr)
		}
		return 0, err
	}
	var v struct {
		Header struct {
			NRows int64 `json:"n_rows"`
		} `json:"header"`
	}
	if err := bench.Result(out, &v); err != nil {
		return 0, fmt.Errorf("itarconv inspect --json %s: %v", idx, err)
	}
	return v.Header.NRows, nil
}

// inspectTBL reads the sample count of a TBL file with `itarconv inspect`.
func inspectTBL(bin, path string) (int64, error) {
	out, err := exec.Command(bin, "inspect", "--json", path).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return 0, fmt.Errorf("itarconv inspect --json %s: %v\n%s", path, err, ee.Stderr)
		}
		return 0, err
	}
	var v struct {
		Samples int64 `json:"samples"`
	}
	if err := bench.Result(out, &v); err != nil {
		return 0, fmt.Errorf("itarconv inspect --json %s: %v", path, err)
	}
	return v.Samples, nil
}

func totalSize(paths []string) int64 {
	var n int64
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil {
			n += st.Size()
		}
	}
	return n
}

func rate(r float64) string {
	switch {
	case r >= 1e6:
		return fmt.Sprintf("%.2fM", r/1e6)
	case r >= 1e3:
		return fmt.Sprintf("%.1fk", r/1e3)
	}
	return fmt.Sprintf("%.0f", r)
}

func printTable(w io.Writer, ms []*measurement) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	tw := tabwriter.NewWriter(bw, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "direction\ttool\tmedian s\tmin-max s\tfiles/s\tMB/s\tx cat\tpeak RSS MiB\tcpu s\t")
	for _, m := range ms {
		ratio := "1.00"
		if b := m.base; b != nil {
			ratio = fmt.Sprintf("%.2f", m.median()/b.median())
		}
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t%.3f-%.3f\t%s\t%.0f\t%s\t%.1f\t%.3f\t\n",
			m.direction, m.tool, m.median(), slices.Min(m.walls), slices.Max(m.walls),
			rate(m.rate()), m.mbps(), ratio, float64(m.maxRSS)/(1<<20), bench.Median(m.cpus))
	}
	tw.Flush()
	fmt.Fprintln(bw, "median/min-max s: wall time of the whole run as this program sees it, process start and fsync included;")
	fmt.Fprintln(bw, "files/s = generated members (= TBL samples) / median s; MB/s = bytes of the direction's input (10^6 B) / median s;")
	fmt.Fprintln(bw, "x cat = median / median of the direction's cat baseline (from tar: the tar shards'); peak RSS: the highest of all runs")
	fmt.Fprintln(bw, "(for cat, of the shell and its children); cpu s: median user+sys of the child(ren).")
}

func printTargets(w io.Writer, ms []*measurement, quick bool, smallN int64) {
	find := func(kind int, order string) *measurement {
		if kind == kindCat {
			return nil
		}
		for _, m := range ms {
			if m.kind == kind && m.order == order {
				return m
			}
		}
		return nil
	}
	if quick {
		fmt.Fprintln(w, "targets (-quick: a tiny dataset, so the verdicts mean little):")
	} else {
		fmt.Fprintln(w, "targets:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ratioTarget := func(m *measurement, limit float64) {
		b := m.base
		ratio := m.median() / b.median()
		fmt.Fprintf(tw, "  %s\ttime <= %.1f x cat\t%.3fs / %.3fs = %.2fx\t%s\n", m.tool, limit,
			m.median(), b.median(), ratio, bench.Verdict(ratio <= limit))
	}
	if m := find(kindCopy, ""); m != nil {
		ratioTarget(m, targetCopyRatio)
	}
	if m := find(kindWrap, ""); m != nil {
		fmt.Fprintf(tw, "  %s\tfiles/s >= %s\t%s\t%s\n", m.tool, rate(targetWrapRate), rate(m.rate()), bench.Verdict(m.rate() >= targetWrapRate))
	}
	for _, o := range []string{"path", "address"} {
		if m := find(kindReverse, o); m != nil {
			ratioTarget(m, targetReverseRatio)
		}
	}
	if m := find(kindTBL, ""); m != nil {
		ratioTarget(m, targetTBLRatio)
	}
	if m := find(kindTBLLZ4, ""); m != nil {
		fmt.Fprintf(tw, "  %s\t(no target)\t%.3fs / %.3fs = %.2fx\t-\n", m.tool, m.median(), m.base.median(), m.median()/m.base.median())
	}
	if m := find(kindTBLReverse, ""); m != nil {
		ratioTarget(m, targetTBLRevRatio)
	}
	for _, m := range ms {
		if t, ok := formatTargets[m.format]; ok && (m.kind == kindToFormat || m.kind == kindFromFormat) {
			ratioTarget(m, t)
		}
	}
	// The direct pairs: against cat of their input, and against the
	// two-step route through a tar fold that they replace.
	twoStep := map[int][2]*measurement{
		kindBarecatToTBL: {find(kindReverse, "address"), find(kindTBL, "")},
		kindTBLToBarecat: {find(kindTBLReverse, ""), find(kindCopy, "")},
	}
	for _, k := range []int{kindBarecatToTBL, kindTBLToBarecat} {
		m := find(k, "")
		if m == nil {
			continue
		}
		b := m.base
		ratio := m.median() / b.median()
		fmt.Fprintf(tw, "  %s\ttime <= %.1f x cat\t%.3fs / %.3fs = %.2fx\t%s\n", m.tool, targetPairRatio,
			m.median(), b.median(), ratio, bench.Verdict(ratio <= targetPairRatio))
		if steps := twoStep[k]; steps[0] != nil && steps[1] != nil {
			two := steps[0].median() + steps[1].median()
			fmt.Fprintf(tw, "  %s\tno slower than through tar\t%.3fs vs %.3fs + %.3fs = %.3fs\t%s\n", m.tool,
				m.median(), steps[0].median(), steps[1].median(), two, bench.Verdict(m.median() <= two))
		}
	}
	for _, k := range []int{kindTBL, kindTBLLZ4, kindTBLReverse} {
		if m := find(k, ""); m != nil && m.smallRSS > 0 {
			limit := int64(float64(m.smallRSS)*rssGrowth) + rssSlack
			fmt.Fprintf(tw, "  %s\tpeak RSS flat in data size\t%.1f MiB (%d members) vs %.1f MiB (%d members)\t%s\n", m.tool,
				float64(m.maxRSS)/(1<<20), m.files, float64(m.smallRSS)/(1<<20), smallN, bench.Verdict(m.maxRSS <= limit))
		}
	}
	tw.Flush()

	if find(kindCopy, "") != nil || find(kindReverse, "path") != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "for context, upstream barecat on this kind of machine (measured once, not re-measured here):")
	}
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	context := func(what string, up float64, m *measurement) {
		if m == nil {
			return
		}
		fmt.Fprintf(tw, "  %s\tupstream %s files/s\titarconv %s files/s\t(%.1fx)\n", what, rate(up), rate(m.rate()), m.rate()/up)
	}
	context("convert (copy)", upstreamCopyRate, find(kindCopy, ""))
	context("convert --wrap", upstreamWrapRate, find(kindWrap, ""))
	context("back to tar, --order path", upstreamReverseRate, find(kindReverse, "path"))
	context("back to tar, --order address", upstreamReverseRate, find(kindReverse, "address"))
	tw.Flush()

	if m := find(kindTBL, ""); m != nil {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "for context, upstream TurboLoader's converters here (measured once, not re-measured here):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "  tar -> TBL, v2 tool\tupstream %s samples/s\titarconv (v2) %s samples/s\t(%.1fx)\n",
			rate(upstreamTBLv2Rate), rate(m.rate()), m.rate()/upstreamTBLv2Rate)
		fmt.Fprintf(tw, "  tar -> TBL, v1 tool\tupstream %s samples/s\titarconv (v2) %s samples/s\t(%.1fx)\n",
			rate(upstreamTBLv1Rate), rate(m.rate()), m.rate()/upstreamTBLv1Rate)
		tw.Flush()
		fmt.Fprintln(w, "  (upstream's v1 tool slows quadratically with the sample count and holds all the data in RAM)")
		tw.Flush()
	}
}
