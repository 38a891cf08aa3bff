package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
	"github.com/itarconv/itarconv/testing/netproxy"
)

// The targets.
const (
	targetIndexSmall = 1.1  // index over URLs / download, small members
	targetIndexLarge = 0.1  // the same, large members
	targetBytesLarge = 0.05 // bytes the index reads / the shards' bytes, large members
	targetConvert    = 0.7  // convert over URLs / (download to files + convert of the files)
)

const (
	stampName   = "remotebench.json"
	largeShards = 8
)

func main() {
	os.Exit(run())
}

type config struct {
	dir        string
	reps       int
	quick      bool
	quiet      time.Duration
	rtts       []time.Duration
	rate       float64 // bytes per second and connection
	conns      int
	small      int // members of the small set
	sizes      []int64
	largeShard int64
	noURLs     bool
	bin        string // an itarconv binary to run instead of building one
}

func run() int {
	var cfg config
	flag.StringVar(&cfg.dir, "dir", filepath.Join(os.TempDir(), "remotebench"), "keep the datasets in this directory and reuse them on later runs")
	flag.IntVar(&cfg.reps, "reps", 3, "timed runs of each step (the median is reported)")
	flag.BoolVar(&cfg.quick, "quick", false, "smoke run: small datasets, one round trip, one rep, unless those flags are given")
	flag.DurationVar(&cfg.quiet, "quiet-wait", 10*time.Second, "before each rep, wait up to this long for other processes to leave the CPUs idle (0: do not wait)")
	rtts := flag.String("rtt", "20ms,50ms,100ms", "simulated round trips, a comma-separated list")
	rate := flag.Float64("rate", 50, "MB/s (10^6 bytes) sent to each connection")
	flag.IntVar(&cfg.conns, "connections", 8, "parallel connections, of itarconv (--connections) and of curl (--parallel-max)")
	flag.IntVar(&cfg.small, "small", 60_000, "members of the small-member set (dataset A scaled)")
	sizes := flag.String("sizes", "4MiB,64MiB", "member sizes of the large-member sets, a comma-separated list")
	largeShard := flag.String("large-shard", "256MiB", "size of each shard of the large-member sets")
	flag.BoolVar(&cfg.noURLs, "no-urls", false, "skip itarconv's runs over URLs: only the baselines and the reference outputs")
	flag.StringVar(&cfg.bin, "bin", "", "run this itarconv binary instead of building ./cmd/itarconv")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "remotebench: no arguments expected")
		return 2
	}
	set := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if cfg.quick {
		for name, v := range map[string]*string{"rtt": rtts, "sizes": sizes, "large-shard": largeShard} {
			if !set[name] {
				*v = map[string]string{"rtt": "20ms", "sizes": "1MiB,4MiB", "large-shard": "16MiB"}[name]
			}
		}
		if !set["reps"] {
			cfg.reps = 1
		}
		if !set["small"] {
			cfg.small = 2_000
		}
	}
	var err error
	if cfg.rtts, err = parseList(*rtts, time.ParseDuration); err != nil {
		fmt.Fprintf(os.Stderr, "remotebench: -rtt: %v\n", err)
		return 2
	}
	if cfg.sizes, err = parseList(*sizes, parseSize); err != nil {
		fmt.Fprintf(os.Stderr, "remotebench: -sizes: %v\n", err)
		return 2
	}
	if cfg.largeShard, err = parseSize(*largeShard); err != nil {
		fmt.Fprintf(os.Stderr, "remotebench: -large-shard: %v\n", err)
		return 2
	}
	cfg.rate = *rate * 1e6
	switch {
	case cfg.reps < 1:
		err = errors.New("-reps must be at least 1")
	case cfg.conns < 1:
		err = errors.New("-connections must be at least 1")
	case cfg.rate < 1:
		err = errors.New("-rate must be positive")
	case cfg.small < 2:
		err = errors.New("-small must be at least 2")
	}
	for _, s := range cfg.sizes {
		if s > cfg.largeShard {
			err = fmt.Errorf("-sizes: %d bytes do not fit in a shard of -large-shard %d", s, cfg.largeShard)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "remotebench: %v\n", err)
		return 2
	}
	repro := []string{"go run ./bench/cmd/remotebench"}
	flag.Visit(func(f *flag.Flag) { repro = append(repro, fmt.Sprintf("-%s=%s", f.Name, f.Value)) })
	if err := runBench(cfg, strings.Join(repro, " ")); err != nil {
		fmt.Fprintf(os.Stderr, "remotebench: %v\n", err)
		return 1
	}
	return 0
}

// parseList parses a comma-separated list.
func parseList[T any](s string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := parse(f)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, errors.New("empty list")
	}
	return out, nil
}

// parseSize parses a size in bytes: 4096, 512KiB, 64MiB, 1GiB.
func parseSize(s string) (int64, error) {
	num, mul := s, int64(1)
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mul = n, u.mul
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%q is not a size (e.g. 4MiB)", s)
	}
	return n * mul, nil
}

// step is one timed command, measured on every rep.
type step struct {
	times               []float64
	bytes, reqs, conns  []int64
	skipped             bool // not run (-no-urls)
	local               bool // reads local files, not the proxy
	diskWritten, output int64
	leftovers           []string  // files an index left besides its output
	copyPeak            []int64   // convert over URLs: the most its copies of the shards took on disk
	cpu                 []float64 // CPU seconds (user + system) of the step's process
}

func (s *step) median() float64 { return bench.Median(s.times) }

// medianInt is the median of counts.
func medianInt(xs []int64) int64 {
	f := make([]float64, len(xs))
	for i, x := range xs {
		f[i] = float64(x)
	}
	return int64(bench.Median(f))
}

// dataset is a set of shards served by the file server.
type dataset struct {
	name   string
	shards []string // local paths
	urls   []string // per round trip's proxy: the shards' URLs
	size   int64    // bytes of all shards
	member int64    // size of each member (large sets), 0 for the small set
	ref    string   // the reference index of the local shards
}

// link is what is measured through one proxy (one round trip).
type link struct {
	rtt   time.Duration
	px    *netproxy.Proxy
	small smallSteps
	large []largeSteps // one per large set
}

type smallSteps struct {
	download, index, fetch, convLocal, convURL step
}

type largeSteps struct {
	download, index step
}

// env is what every step needs.
type env struct {
	cfg  config
	bin  string // itarconv
	curl string
	work string // outputs and downloads
	tmp  string // the children's $TMPDIR, checked to stay empty
	// lastCPU is the CPU seconds of the last child process run.
	lastCPU float64
}

func runBench(cfg config, repro string) error {
	curl, err := exec.LookPath("/usr/bin/curl")
	if err != nil {
		if curl, err = exec.LookPath("curl"); err != nil {
			return errors.New("curl not found")
		}
	}
	binDir, err := os.MkdirTemp("", "remotebench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	if err := os.MkdirAll(cfg.dir, 0o755); err != nil {
		return err
	}
	// The downloads and outputs sit beside the datasets, on their file
	// system, and must not outlive an interrupted run.
	work, err := os.MkdirTemp(cfg.dir, "remotebench-work-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	bench.RemoveOnInterrupt(work, binDir)
	e := &env{cfg: cfg, bin: filepath.Join(binDir, "itarconv"), curl: curl, work: work, tmp: filepath.Join(work, "tmp")}
	if err := os.MkdirAll(e.tmp, 0o755); err != nil {
		return err
	}
	t0 := time.Now()
	if cfg.bin != "" {
		if e.bin, err = filepath.Abs(cfg.bin); err != nil {
			return err
		}
		fmt.Printf("itarconv: %s\n", e.bin)
	} else if err := bench.BuildItarconv(e.bin); err != nil {
		return err
	} else {
		fmt.Printf("built itarconv in %.1fs\n", time.Since(t0).Seconds())
	}

	// The datasets.
	d := bench.DatasetA.Scaled(cfg.small)
	smallDir := filepath.Join(cfg.dir, fmt.Sprintf("%s-%d", d.Name, d.Members))
	t0 = time.Now()
	shards, reused, err := bench.Prepare(d, smallDir, stampName)
	if err != nil {
		return err
	}
	small := &dataset{name: fmt.Sprintf("%s (%d members of 1-20 KiB)", d.Name, d.Members), shards: shards}
	report(small, reused, time.Since(t0))
	var large []*dataset
	for _, size := range cfg.sizes {
		t0 := time.Now()
		dir := filepath.Join(cfg.dir, fmt.Sprintf("large-%s-%s", sizeName(size), sizeName(cfg.largeShard)))
		shards, reused, err := prepareLarge(dir, size, cfg.largeShard)
		if err != nil {
			return err
		}
		ds := &dataset{name: fmt.Sprintf("members of %s", sizeName(size)), shards: shards, member: size}
		report(ds, reused, time.Since(t0))
		large = append(large, ds)
	}
	all := append([]*dataset{small}, large...)

	// The reference indexes, of the shards as local files.
	for i, ds := range all {
		ds.ref = filepath.Join(work, "ref", fmt.Sprint(i), "OUT.taridx")
		if err := os.MkdirAll(filepath.Dir(ds.ref), 0o755); err != nil {
			return err
		}
		if _, err := e.itarconv(append([]string{"index", "-q", "-o", ds.ref}, ds.shards...)...); err != nil {
			return err
		}
	}

	// The server, and a proxy in front of it for each round trip.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(cfg.dir))}
	go srv.Serve(ln)
	defer srv.Close()
	var links []*link
	for _, rtt := range cfg.rtts {
		px, err := netproxy.Start(netproxy.Config{Upstream: "http://" + ln.Addr().String(), Delay: rtt, BytesPerSecond: int64(cfg.rate)})
		if err != nil {
			return err
		}
		defer px.Close()
		links = append(links, &link{rtt: rtt, px: px, large: make([]largeSteps, len(large))})
	}
	urls := func(l *link, ds *dataset) ([]string, error) {
		var out []string
		for _, s := range ds.shards {
			rel, err := filepath.Rel(cfg.dir, s)
			if err != nil {
				return nil, err
			}
			out = append(out, l.px.URL()+"/"+filepath.ToSlash(rel))
		}
		return out, nil
	}

	fmt.Printf("%d cores, GOMAXPROCS %d; %d timed reps; round trips %v; %.0f MB/s per connection; %d connections\n",
		runtime.NumCPU(), runtime.GOMAXPROCS(0), cfg.reps, cfg.rtts, cfg.rate/1e6, cfg.conns)
	c := fmt.Sprint(cfg.conns)
	fmt.Println("commands (URL...: the shards through the proxy; FILES...: downloaded to local files):")
	fmt.Printf("  download: curl -sS --fail --noproxy '*' --parallel --parallel-immediate --parallel-max %s -o /dev/null URL1 -o /dev/null URL2 ...\n", c)
	fmt.Printf("  index:    itarconv index -q --connections %s -o OUT.taridx URL...\n", c)
	fmt.Printf("  fetch:    curl ... --parallel-max %s -o FILE1 URL1 -o FILE2 URL2 ..., then itarconv convert -q FILES... OUT.barecat\n", c)
	fmt.Printf("  convert:  itarconv convert -q --connections %s URL... OUT.barecat\n", c)
	if cfg.noURLs {
		fmt.Println("  -no-urls: itarconv's runs over URLs are skipped")
	}
	fmt.Println()

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
		for _, l := range links {
			u, err := urls(l, small)
			if err != nil {
				return err
			}
			if err := e.runSmall(l, small, u); err != nil {
				return fmt.Errorf("round trip %v, %s: %w", l.rtt, small.name, err)
			}
			s := &l.small
			fmt.Printf("rep %d/%d, rtt %v, small: download %.3fs, index %s, fetch %.3fs + convert %.3fs, convert %s\n", rep+1, cfg.reps, l.rtt,
				last(s.download.times), lastOr(&s.index), last(s.fetch.times), last(s.convLocal.times), lastOr(&s.convURL))
			for i, ds := range large {
				u, err := urls(l, ds)
				if err != nil {
					return err
				}
				if err := e.runLarge(l, &l.large[i], ds, u); err != nil {
					return fmt.Errorf("round trip %v, %s: %w", l.rtt, ds.name, err)
				}
				fmt.Printf("rep %d/%d, rtt %v, %s: download %.3fs, index %s\n", rep+1, cfg.reps, l.rtt, ds.name,
					last(l.large[i].download.times), lastOr(&l.large[i].index))
			}
		}
		noise.Pause()
	}
	if cfg.quiet > 0 {
		fmt.Printf("waited %.1fs in all for a quiet machine before the reps; %d of %d reps started with other processes still busy\n",
			waited.Seconds(), busyStarts, cfg.reps)
	}
	if cfg.noURLs {
		fmt.Println("checks: none over URLs (-no-urls)")
	} else {
		fmt.Println("checks: every index over URLs equals the index of the local files, byte for byte (.taridx); every Barecat from URLs has the shards of the one from downloaded files")
	}
	fmt.Println(noise.Report("the reps"))
	fmt.Println()
	printTable(os.Stdout, links, small, large)
	fmt.Println()
	printTargets(os.Stdout, cfg, links, small, large)
	fmt.Println()
	fmt.Println("reproduce:", repro)
	return nil
}

func last(xs []float64) float64 { return xs[len(xs)-1] }

func lastOr(s *step) string {
	if s.skipped {
		return "skipped"
	}
	return fmt.Sprintf("%.3fs", last(s.times))
}

func report(ds *dataset, reused bool, took time.Duration) {
	for _, s := range ds.shards {
		ds.size += sizeOf(s)
	}
	what := "generated"
	if reused {
		what = "reused"
	}
	fmt.Printf("dataset %s: %s %d shards (%s MiB) in %s in %.1fs\n", ds.name, what, len(ds.shards), mib(ds.size),
		filepath.Dir(ds.shards[0]), took.Seconds())
}

// runSmall runs the steps on the small members through link l: the
// download, the index over URLs, the download to files and their convert,
// and the convert over URLs.
func (e *env) runSmall(l *link, ds *dataset, urls []string) error {
	s := &l.small
	nulls := slices.Repeat([]string{os.DevNull}, len(urls))
	if err := e.timed(l, ds, &s.download, func() error { return e.curlGet(urls, nulls) }); err != nil {
		return err
	}

	idxDir := filepath.Join(e.work, "index")
	if e.cfg.noURLs {
		s.index.skipped = true
	} else if err := e.index(l, ds, &s.index, idxDir, urls); err != nil {
		return err
	}

	dl := filepath.Join(e.work, "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	files := make([]string, len(urls))
	for i, sh := range ds.shards {
		files[i] = filepath.Join(dl, filepath.Base(sh))
	}
	if err := e.timed(l, ds, &s.fetch, func() error { return e.curlGet(urls, files) }); err != nil {
		return err
	}
	for i, f := range files {
		if got, want := sizeOf(f), sizeOf(ds.shards[i]); got != want {
			return fmt.Errorf("curl downloaded %d bytes of %s, want %d", got, urls[i], want)
		}
	}
	local := filepath.Join(e.work, "local", "OUT.barecat")
	if err := os.MkdirAll(filepath.Dir(local), 0o755); err != nil {
		return err
	}
	// The convert of the files reads what curl wrote: still in the page
	// cache, as it would be right after a download.
	s.convLocal.local = true
	if err := e.timed(l, ds, &s.convLocal, func() error {
		_, err := e.itarconv(append(append([]string{"convert", "-q"}, files...), local)...)
		return err
	}); err != nil {
		return err
	}
	if err := os.RemoveAll(dl); err != nil {
		return err
	}

	if e.cfg.noURLs {
		s.convURL.skipped = true
	} else {
		remote := filepath.Join(e.work, "remote", "OUT.barecat")
		if err := os.MkdirAll(filepath.Dir(remote), 0o755); err != nil {
			return err
		}
		var peak int64
		if err := e.timed(l, ds, &s.convURL, func() error {
			stop := watchCopies(filepath.Dir(remote), &peak)
			_, err := e.itarconv(append(append([]string{"convert", "-q", "--connections", fmt.Sprint(e.cfg.conns)}, urls...), remote)...)
			stop()
			return err
		}); err != nil {
			return err
		}
		s.convURL.copyPeak = append(s.convURL.copyPeak, peak)
		if err := sameBarecat(local, remote); err != nil {
			return err
		}
	}
	return e.clean()
}

// watchCopies samples, every few milliseconds until stop, the disk the
// spool's copies of remote shards take in dir (files named *.plain.tar*,
// their allocated blocks), and keeps the most in peak.
func watchCopies(dir string, peak *int64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			var n int64
			ents, _ := os.ReadDir(dir)
			for _, en := range ents {
				var st syscall.Stat_t
				if strings.Contains(en.Name(), ".plain.tar") && syscall.Stat(filepath.Join(dir, en.Name()), &st) == nil {
					n += st.Blocks * 512
				}
			}
			*peak = max(*peak, n)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// runLarge runs the download and the index over URLs of a large-member
// set through link l.
func (e *env) runLarge(l *link, s *largeSteps, ds *dataset, urls []string) error {
	nulls := slices.Repeat([]string{os.DevNull}, len(urls))
	if err := e.timed(l, ds, &s.download, func() error { return e.curlGet(urls, nulls) }); err != nil {
		return err
	}
	if e.cfg.noURLs {
		s.index.skipped = true
		return nil
	}
	if err := e.index(l, ds, &s.index, filepath.Join(e.work, "index"), urls); err != nil {
		return err
	}
	return e.clean()
}

// index runs `itarconv index` over the URLs into dir, checks its output
// against the reference and records what it wrote on the local disk.
func (e *env) index(l *link, ds *dataset, s *step, dir string, urls []string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	out := filepath.Join(dir, "OUT.taridx")
	var p proc
	err := e.timed(l, ds, s, func() error {
		var err error
		p, err = e.itarconv(append([]string{"index", "-q", "--connections", fmt.Sprint(e.cfg.conns), "-o", out}, urls...)...)
		return err
	})
	if err != nil {
		return err
	}
	if err := sameFile(ds.ref, out); err != nil {
		return err
	}
	// Nothing but the index (and its manifest) in its directory or in
	// $TMPDIR; the blocks written are those of the dirtied pages, on
	// whatever file.
	s.diskWritten, s.output = max(s.diskWritten, p.written), sizeOf(out)
	s.leftovers = nil
	for _, d := range []string{dir, e.tmp} {
		ents, err := os.ReadDir(d)
		if err != nil {
			return err
		}
		for _, en := range ents {
			if d == dir && (en.Name() == "OUT.taridx" || en.Name() == "OUT.taridx.shards.json") {
				continue
			}
			s.leftovers = append(s.leftovers, filepath.Join(d, en.Name()))
		}
	}
	return nil
}

// timed runs f as a step through link l: the served shards warm in the
// page cache, the file system synced, the proxy's counts from zero.
func (e *env) timed(l *link, ds *dataset, s *step, f func() error) error {
	syscall.Sync()
	if err := bench.Warm(ds.shards); err != nil {
		return err
	}
	l.px.ResetStats()
	e.lastCPU = 0
	t0 := time.Now()
	if err := f(); err != nil {
		return err
	}
	s.times = append(s.times, time.Since(t0).Seconds())
	s.cpu = append(s.cpu, e.lastCPU)
	st := l.px.Stats()
	s.bytes = append(s.bytes, st.BytesToClient)
	s.reqs = append(s.reqs, st.Requests)
	s.conns = append(s.conns, st.Connections)
	return nil
}

// clean removes every output and download, and the children's temporary
// files, and syncs: the next step does not pay for this one's writeback.
func (e *env) clean() error {
	for _, d := range []string{"index", "download", "local", "remote", "tmp"} {
		if err := os.RemoveAll(filepath.Join(e.work, d)); err != nil {
			return err
		}
	}
	syscall.Sync()
	return os.MkdirAll(e.tmp, 0o755)
}

// curlGet downloads each of urls to the file at the same place in outs,
// on at most -connections connections at once.
func (e *env) curlGet(urls, outs []string) error {
	args := []string{"-sS", "--fail", "--noproxy", "*", "--parallel", "--parallel-immediate", "--parallel-max", fmt.Sprint(e.cfg.conns)}
	for i, u := range urls {
		args = append(args, "-o", outs[i], u)
	}
	cmd := exec.Command(e.curl, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("curl %s ...: %v\n%s", strings.Join(args[:8], " "), err, stderr.Bytes())
	}
	e.lastCPU = cpuOf(cmd)
	return nil
}

// cpuOf is the CPU seconds (user + system) a finished command used.
func cpuOf(cmd *exec.Cmd) float64 {
	return (cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()).Seconds()
}

// proc is one finished run of itarconv.
type proc struct {
	written int64 // bytes it sent towards the disk (rusage blocks out)
}

// itarconv runs the binary with args, its $TMPDIR our own (the caller
// times it).
func (e *env) itarconv(args ...string) (proc, error) {
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+e.tmp)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		return proc{}, fmt.Errorf("itarconv %s: %v\n%s", shorten(args), err, stderr.Bytes())
	}
	var p proc
	e.lastCPU = cpuOf(cmd)
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		p.written = ru.Oublock * 512
	}
	return p, nil
}

// shorten keeps a failed command's line readable: a long list of shards
// is cut.
func shorten(args []string) string {
	if len(args) > 12 {
		args = append(slices.Clone(args[:10]), fmt.Sprintf("... (%d more)", len(args)-11), args[len(args)-1])
	}
	return strings.Join(args, " ")
}

// sameBarecat checks that two Barecat archives have the same shards, byte
// for byte (their SQLite files may differ in their pages).
func sameBarecat(want, got string) error {
	a, _ := filepath.Glob(want + "-shard-*")
	b, _ := filepath.Glob(got + "-shard-*")
	if len(a) == 0 || !slices.Equal(baseNames(a), baseNames(b)) {
		return fmt.Errorf("the archive from URLs has shards %q, the one from files %q", baseNames(b), baseNames(a))
	}
	for i := range a {
		if err := sameFile(a[i], b[i]); err != nil {
			return err
		}
	}
	return nil
}

func baseNames(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = filepath.Base(p)
	}
	return out
}

// sameFile compares two files byte for byte.
func sameFile(want, got string) error {
	a, err := os.ReadFile(want)
	if err != nil {
		return err
	}
	b, err := os.ReadFile(got)
	if err != nil {
		return err
	}
	if !bytes.Equal(a, b) {
		i := 0
		for i < min(len(a), len(b)) && a[i] == b[i] {
			i++
		}
		return fmt.Errorf("%s (%d bytes) differs from %s (%d bytes) at byte %d", got, len(b), want, len(a), i)
	}
	return nil
}

func sizeOf(p string) int64 {
	if st, err := os.Stat(p); err == nil {
		return st.Size()
	}
	return 0
}

func mib(n int64) string { return fmt.Sprintf("%.1f", float64(n)/(1<<20)) }

// sizeName prints a size as parseSize reads it.
func sizeName(n int64) string {
	for _, u := range []struct {
		suffix string
		mul    int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.mul == 0 {
			return fmt.Sprintf("%d%s", n/u.mul, u.suffix)
		}
	}
	return fmt.Sprint(n)
}

// spread is a median with its range.
func spread(xs []float64) string {
	return fmt.Sprintf("%.3f (%.3f-%.3f)", bench.Median(xs), slices.Min(xs), slices.Max(xs))
}

func printTable(w io.Writer, links []*link, small *dataset, large []*dataset) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rtt\tset\tstep\ts\tCPU s\tMiB from proxy\t% of shards\trequests\tconnections\t")
	row := func(l *link, ds *dataset, name string, s *step) {
		if s.skipped {
			fmt.Fprintf(tw, "%v\t%s\t%s\tskipped\t\t\t\t\t\t\n", l.rtt, ds.name, name)
			return
		}
		if s.local {
			fmt.Fprintf(tw, "%v\t%s\t%s\t%s\t%.2f\t-\t-\t-\t-\t\n", l.rtt, ds.name, name, spread(s.times), bench.Median(s.cpu))
			return
		}
		b := medianInt(s.bytes)
		fmt.Fprintf(tw, "%v\t%s\t%s\t%s\t%.2f\t%s\t%.2f%%\t%d\t%d\t\n", l.rtt, ds.name, name, spread(s.times), bench.Median(s.cpu), mib(b),
			100*float64(b)/float64(ds.size), medianInt(s.reqs), medianInt(s.conns))
	}
	for _, l := range links {
		s := &l.small
		row(l, small, "curl download", &s.download)
		row(l, small, "itarconv index URL...", &s.index)
		row(l, small, "curl download to files", &s.fetch)
		row(l, small, "then itarconv convert FILES...", &s.convLocal)
		row(l, small, "itarconv convert URL...", &s.convURL)
		for i, ds := range large {
			row(l, ds, "curl download", &l.large[i].download)
			row(l, ds, "itarconv index URL...", &l.large[i].index)
		}
	}
	tw.Flush()
	fmt.Fprintln(w, "s: median (min-max) wall time, process start included; CPU s: median CPU seconds (user + system) of the step's")
	fmt.Fprintln(w, "process (curl or itarconv; not the server's nor the proxy's); MiB from proxy, requests, connections: medians of what the")
	fmt.Fprintln(w, "proxy counted during the step (body bytes sent to the client); % of shards: those bytes over the shards' size.")
}

func printTargets(w io.Writer, cfg config, links []*link, small *dataset, large []*dataset) {
	if cfg.quick {
		fmt.Fprintln(w, "targets (-quick: small datasets, so the verdicts mean little):")
	} else {
		fmt.Fprintln(w, "targets:")
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	ratio := func(label, target string, num, den float64, ok func(float64) bool, what string) {
		r := num / den
		fmt.Fprintf(tw, "  %s\t%s\t%s%.3fs / %.3fs = %.2fx\t%s\n", label, target, what, num, den, r, bench.Verdict(ok(r)))
	}
	for _, l := range links {
		s := &l.small
		label := fmt.Sprintf("rtt %v, %s", l.rtt, small.name)
		if s.index.skipped {
			fmt.Fprintf(tw, "  %s\tindex <= %.1fx download\tskipped (-no-urls)\t\n", label, targetIndexSmall)
		} else {
			ratio(label, fmt.Sprintf("index <= %.1fx download", targetIndexSmall), s.index.median(), s.download.median(),
				func(r float64) bool { return r <= targetIndexSmall }, "")
			clean := len(s.index.leftovers) == 0 && s.index.diskWritten <= s.index.output+(1<<20)
			left := "nothing else left"
			if len(s.index.leftovers) > 0 {
				left = "left " + strings.Join(s.index.leftovers, ", ")
			}
			fmt.Fprintf(tw, "  %s\tindex writes only its output\twrote at most %s MiB for an index of %s MiB; %s\t%s\n", label,
				mib(s.index.diskWritten), mib(s.index.output), left, bench.Verdict(clean))
		}
		if s.convURL.skipped {
			fmt.Fprintf(tw, "  %s\tconvert <= %.1fx download + convert\tskipped (-no-urls)\t\n", label, targetConvert)
		} else {
			both := s.fetch.median() + s.convLocal.median()
			ratio(label, fmt.Sprintf("convert <= %.1fx download + convert", targetConvert), s.convURL.median(), both,
				func(r float64) bool { return r <= targetConvert }, "")
			// The floor of that ratio: a convert over URLs cannot beat
			// the download alone through the same link.
			fmt.Fprintf(tw, "  %s\t(floor: download alone)\t%.3fs / %.3fs = %.2fx\t\n", label, s.download.median(), both, s.download.median()/both)
			peak := slices.Max(s.convURL.copyPeak)
			fmt.Fprintf(tw, "  %s\tconvert's copies on disk < the shards\tpeak %s MiB of copies for %s MiB of shards\t%s\n", label,
				mib(peak), mib(small.size), bench.Verdict(peak < small.size))
		}
		for i, ds := range large {
			ls := &l.large[i]
			label := fmt.Sprintf("rtt %v, %s", l.rtt, ds.name)
			// Where a header seek, one round trip, costs a tenth of
			// streaming the member at the rate of one connection.
			need := 10 * l.rtt.Seconds() * cfg.rate
			note := fmt.Sprintf("(0.1x needs members over ~%.0f MB) ", need/1e6)
			if ls.index.skipped {
				fmt.Fprintf(tw, "  %s\tindex < %.1fx download\tskipped (-no-urls)\t\n", label, targetIndexLarge)
				continue
			}
			ratio(label, fmt.Sprintf("index < %.1fx download", targetIndexLarge), ls.index.median(), ls.download.median(),
				func(r float64) bool { return r < targetIndexLarge }, note)
			b := medianInt(ls.index.bytes)
			share := float64(b) / float64(ds.size)
			fmt.Fprintf(tw, "  %s\tindex reads < %.0f%% of the bytes\t%s MiB of %s MiB = %.2f%%\t%s\n", label, 100*targetBytesLarge,
				mib(b), mib(ds.size), 100*share, bench.Verdict(share < targetBytesLarge))
		}
	}
	tw.Flush()
}

// largeStamp records what a large-member set was generated from.
type largeStamp struct {
	Member, Shard, Members int64 // Members: in each shard
	Shards                 int
	Sizes                  []int64
}

// prepareLarge makes sure dir holds the shards of members of size member,
// shard bytes each (at least one member), reusing them when its stamp
// matches.
func prepareLarge(dir string, member, shard int64) (paths []string, reused bool, err error) {
	want := largeStamp{Member: member, Shard: shard, Members: membersPerShard(member, shard), Shards: largeShards}
	for i := range largeShards {
		paths = append(paths, filepath.Join(dir, fmt.Sprintf("large_%04d.tar", i)))
	}
	if b, err := os.ReadFile(filepath.Join(dir, stampName)); err == nil {
		var got largeStamp
		if json.Unmarshal(b, &got) == nil && len(got.Sizes) == largeShards {
			ok := got.Member == want.Member && got.Shard == want.Shard && got.Members == want.Members
			for i, p := range paths {
				ok = ok && sizeOf(p) == got.Sizes[i]
			}
			if ok {
				return paths, true, nil
			}
		}
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, false, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, false, err
	}
	for i, p := range paths {
		if err := writeLarge(p, i, member, shard); err != nil {
			return nil, false, fmt.Errorf("generating %s: %w", p, err)
		}
		want.Sizes = append(want.Sizes, sizeOf(p))
	}
	b, _ := json.Marshal(want)
	return paths, false, os.WriteFile(filepath.Join(dir, stampName), b, 0o644)
}
