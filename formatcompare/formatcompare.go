package formatcompare

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/itarconv/itarconv/formatcompare/shardgen"
)

// errWrongBytes: a format's own check found its bytes changed.
var errWrongBytes = errors.New("wrong bytes")

// ErrFailed: at least one format could not be built or returned wrong
// bytes; the report names it.
var ErrFailed = errors.New("format benchmark failed")

// Synthetic describes a generated source: Samples members (pairs of .jpg
// and .cls sharing a stem, rounded down to an even count), payload sizes
// drawn uniformly from [MinSize, MaxSize], in Shards tar shards.
type Synthetic struct {
	Samples int   `json:"samples"`
	Shards  int   `json:"shards"`
	MinSize int   `json:"min_size"`
	MaxSize int   `json:"max_size"`
	Seed    int64 `json:"seed"`
}

// Options tune Run.
type Options struct {
	// The source: a fold's tar shards in fid order, or Synthetic.
	Shards    []string
	Fold      string
	Synthetic *Synthetic
	// WorkDir holds the conversions (and the synthetic source); it must
	// exist. Run removes what it wrote there unless Keep.
	WorkDir string
	Keep    bool
	Formats []string // default AllFormats
	Reads   int      // random reads per repetition (default DefaultReads)
	Reps    int      // repetitions of every timing (default 3)
	// ColdReads is how many distinct samples of the read list are read
	// cold per repetition (default DefaultColdReads): each is a block I/O.
	ColdReads int
	Seed      int64 // of the random sample list (default 1)
	Workers   int   // conversion workers (default: all cores)
	NoCold    bool  // skip the cold-cache random reads
	// Corrupt names a format whose data file gets one byte flipped after
	// it is built (in the payload of the first sample of the random list):
	// the read check must catch it. For tests; formats whose data are the
	// source's own tars are refused.
	Corrupt  string
	Command  string // the command line, for the report
	Progress func(step string, done, total int)
}

// Report is the whole result; report.json is this, indented.
type Report struct {
	Command  string          `json:"command"`
	Machine  Machine         `json:"machine"`
	Dataset  Dataset         `json:"dataset"`
	Settings Settings        `json:"settings"`
	Cold     ColdInfo        `json:"cold"`
	Formats  []*FormatResult `json:"formats"`
	Failed   []string        `json:"failed,omitempty"`
	Started  time.Time       `json:"started"`
	Seconds  float64         `json:"seconds"`
}

// Dataset describes the source.
type Dataset struct {
	Source       string     `json:"source"` // the fold's directory, or "synthetic"
	Fold         string     `json:"fold"`
	Shards       int        `json:"shards"`
	Samples      int        `json:"samples"` // regular members
	PayloadBytes int64      `json:"payload_bytes"`
	TarBytes     int64      `json:"tar_bytes"`
	MinSize      int64      `json:"min_sample_bytes"`
	MaxSize      int64      `json:"max_sample_bytes"`
	MeanSize     float64    `json:"mean_sample_bytes"`
	Synthetic    *Synthetic `json:"synthetic,omitempty"`
}

// Settings are the run's parameters.
type Settings struct {
	Reads       int   `json:"reads"`
	CommonReads int   `json:"distinct_samples_in_read_list"`
	Reps        int   `json:"reps"`
	Seed        int64 `json:"seed"`
	Workers     int   `json:"workers"`
}

// ColdInfo says whether cold-cache reads were measured, and if not why.
type ColdInfo struct {
	Measured bool   `json:"measured"`
	Method   string `json:"method"`
	Note     string `json:"note,omitempty"`
}

// FormatResult is one format's figures. Times are medians over the
// repetitions; the _reps lists give every repetition (the spread).
type FormatResult struct {
	Name    string     `json:"name"`
	Label   string     `json:"label"`
	Samples int        `json:"samples"` // source samples the format holds
	Files   []fileInfo `json:"files"`

	BuildSeconds     float64   `json:"build_seconds"`
	BuildSecondsReps []float64 `json:"build_seconds_reps"`
	BuildMBPerS      float64   `json:"build_mb_per_s"` // payload MB (1e6 bytes) per second

	Bytes        int64   `json:"bytes"`         // data files (for the tar fold and --wrap: the source's tars)
	IndexBytes   int64   `json:"index_bytes"`   // index files (TBL: header, index and metadata section)
	TotalBytes   int64   `json:"total_bytes"`   // bytes + index_bytes
	WrittenBytes int64   `json:"written_bytes"` // bytes the conversion wrote (not shared with the source)
	OverheadPct  float64 `json:"overhead_pct"`  // total_bytes over the raw payload, in percent

	IndexOpenUs     float64   `json:"index_open_us"`
	IndexOpenUsReps []float64 `json:"index_open_us_reps"`

	RandomReads           int       `json:"random_reads"`
	RandomReadP50Us       float64   `json:"random_read_p50_us"`
	RandomReadP99Us       float64   `json:"random_read_p99_us"`
	RandomReadMaxUs       float64   `json:"random_read_max_us"`
	RandomReadP50UsReps   []float64 `json:"random_read_p50_us_reps"`
	RandomReadP99UsReps   []float64 `json:"random_read_p99_us_reps"`
	RandomReadMaxUsReps   []float64 `json:"random_read_max_us_reps"`
	RandomReadsPerSec     float64   `json:"random_reads_per_s"`
	CheckP50Us            float64   `json:"check_p50_us"`                  // the xxh64 check of one read's bytes, not in the read times
	OwnCheck              string    `json:"own_check,omitempty"`           // the format's own integrity check of a read, if any
	OwnCheckP50Us         float64   `json:"own_check_p50_us"`              // its time per read (in the warm-up), not in the read times
	ColdReads             int       `json:"cold_reads,omitempty"`          // timed cold reads: their pages were not resident
	ColdFoundResident     int       `json:"cold_found_resident,omitempty"` // cold reads whose pages were resident (read ahead): not timed
	ColdIndexOpenUs       float64   `json:"cold_index_open_us,omitempty"`
	ColdRandomReadP50Us   float64   `json:"cold_random_read_p50_us,omitempty"`
	ColdRandomReadP99Us   float64   `json:"cold_random_read_p99_us,omitempty"`
	ColdRandomReadMaxUs   float64   `json:"cold_random_read_max_us,omitempty"`
	ColdRandomReadP50Reps []float64 `json:"cold_random_read_p50_us_reps,omitempty"`
	ColdResidentBytes     int64     `json:"cold_resident_bytes_after_drop,omitempty"`

	SequentialSeconds     float64   `json:"sequential_seconds"`
	SequentialMBPerS      float64   `json:"sequential_mb_per_s"`
	SequentialMBPerSReps  []float64 `json:"sequential_mb_per_s_reps"`
	SequentialSamples     int       `json:"sequential_samples"`
	SequentialBytes       int64     `json:"sequential_bytes"`
	ReadsChecked          int64     `json:"reads_checked"` // reads whose bytes matched the source's hash
	Error                 string    `json:"error,omitempty"`
	CorruptedForTest      bool      `json:"corrupted_for_test,omitempty"`
	formatErr             error
	built                 bool
	sequentialHashSeconds float64
}

// Defaults of Options: a run on a small fold does about 1.5 million
// operations in all (Plan), seconds on a laptop; larger folds take longer
// for the builds and the sequential passes, which grow with the data.
const (
	DefaultReads     = 2_000
	DefaultColdReads = 200
)

// Plan is the work a run will do, before it starts.
type Plan struct {
	Builds           int // conversions (formats x reps)
	RandomReads      int // warm random reads, warm-ups included
	ColdReads        int // reads after the pages were dropped, at most
	SequentialPasses int // reads of every sample, warm-ups included
}

// Plan is the work Run will do with these options.
func (o Options) Plan() Plan {
	o.defaults()
	n := len(o.Formats)
	return Plan{Builds: n * o.Reps, RandomReads: n * o.Reads * (1 + o.Reps),
		ColdReads: n * min(o.ColdReads, o.Reads) * o.Reps, SequentialPasses: n * (1 + o.Reps)}
}

func (o *Options) defaults() {
	if len(o.Formats) == 0 {
		o.Formats = DefaultFormats()
	}
	if o.Reads <= 0 {
		o.Reads = DefaultReads
	}
	if o.ColdReads <= 0 {
		o.ColdReads = DefaultColdReads
	}
	if o.Reps <= 0 {
		o.Reps = 3
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
}

// Run benchmarks every format on the source and returns the report. When a
// format fails (its conversion, or a read that returned wrong bytes), the
// report is complete for the others and the error, wrapping ErrFailed,
// names it.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts.defaults()
	start := time.Now()
	rep := &Report{Command: opts.Command, Machine: machineInfo(opts.WorkDir), Started: start.UTC(),
		Settings: Settings{Reads: opts.Reads, Reps: opts.Reps, Seed: opts.Seed, Workers: opts.Workers}}
	prog := &steps{report: opts.Progress, total: 1 + 2*len(opts.Formats)}
	var written []string // what Run made in WorkDir, removed unless Keep
	defer func() {
		if !opts.Keep {
			for _, p := range written {
				os.RemoveAll(p)
			}
		}
	}()

	prog.step("reading the source")
	src, err := readSource(ctx, opts, rep, &written)
	if err != nil {
		return nil, err
	}
	fmts, err := newFormats(opts, src, rep, &written)
	if err != nil {
		return nil, err
	}

	// Build every format first: the read list is drawn from the samples
	// every format holds.
	for k, f := range fmts {
		prog.step("building " + f.label)
		res := rep.Formats[k]
		if err := buildFormat(ctx, f, res, src, opts.Reps, opts.Workers); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.fail(fmt.Errorf("building: %w", err))
		}
	}
	list := readList(src, fmts, rep.Formats, opts.Reads, opts.Seed)
	rep.Settings.CommonReads = countDistinct(list)
	if opts.Corrupt != "" {
		if err := corrupt(fmts, rep.Formats, opts.Corrupt, list, src); err != nil {
			return nil, err
		}
	}

	cold := &coldState{enabled: !opts.NoCold}
	if opts.NoCold {
		cold.note = "not measured (--no-cold)"
	}
	for k, f := range fmts {
		prog.step("reading " + f.label)
		res := rep.Formats[k]
		if !res.built {
			continue
		}
		if err := measureReads(ctx, f, res, src, list, opts.Reps, opts.ColdReads, cold); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			res.fail(err)
		}
	}
	rep.setCold(cold)
	rep.Seconds = time.Since(start).Seconds()
	if opts.Progress != nil {
		opts.Progress("done", prog.total, prog.total)
	}
	return rep, rep.failure()
}

// steps reports Run's progress: each step as it starts, with the number
// done before it.
type steps struct {
	report      func(step string, done, total int)
	done, total int
}

func (s *steps) step(what string) {
	if s.report != nil {
		s.report(what, s.done, s.total)
	}
	s.done++
}

// readSource reads the tar shards, or generates the synthetic dataset
// first (adding its directory to written), and describes it in rep.
func readSource(ctx context.Context, opts Options, rep *Report, written *[]string) (*source, error) {
	shards, foldName, dsSource := opts.Shards, opts.Fold, ""
	if opts.Synthetic != nil {
		sy := *opts.Synthetic
		d := shardgen.Dataset{Name: "synthetic", Fold: "train", Members: sy.Samples &^ 1, Shards: max(sy.Shards, 1),
			MinSize: sy.MinSize, MaxSize: sy.MaxSize, Seed: sy.Seed}
		dir := filepath.Join(opts.WorkDir, "source")
		*written = append(*written, dir)
		var err error
		if shards, err = d.Generate(ctx, dir); err != nil {
			return nil, err
		}
		foldName, dsSource = "train", "synthetic"
		rep.Dataset.Synthetic = &sy
		syncFiles(shards)
	} else if len(shards) > 0 {
		dsSource = filepath.Dir(shards[0])
	}
	if len(shards) == 0 {
		return nil, errors.New("no source: give tar shards or a synthetic dataset")
	}
	if foldName == "" {
		foldName = "fold"
	}
	src, err := loadSource(ctx, shards, foldName, opts.Workers)
	if err != nil {
		return nil, err
	}
	rep.Dataset = describe(src, dsSource, rep.Dataset.Synthetic)
	return src, nil
}

// newFormats sets up each format to compare in its own directory of
// WorkDir (added to written, even when a later one fails) and its result
// in rep.
func newFormats(opts Options, src *source, rep *Report, written *[]string) ([]*format, error) {
	var fmts []*format
	for _, name := range opts.Formats {
		f, err := newFormat(name, filepath.Join(opts.WorkDir, name), src)
		if err != nil {
			return nil, err
		}
		fmts = append(fmts, f)
		*written = append(*written, f.dir)
		rep.Formats = append(rep.Formats, &FormatResult{Name: f.name, Label: f.label})
	}
	return fmts, nil
}

// setCold records how the cold reads were measured; when they were not,
// no format keeps cold figures (a few formats measured before the cache
// could not be dropped are not comparable).
func (rep *Report) setCold(cold *coldState) {
	rep.Cold = ColdInfo{Measured: cold.enabled && cold.measured, Note: cold.note,
		Method: "per repetition: fsync and posix_fadvise(POSIX_FADV_DONTNEED) on every data and index file of the format, mincore to check the pages are gone, the index opened (and TBL mapped) after, then distinct samples of the read list read once each; before each read mincore checks its data pages: reads that found any resident (read ahead) are not timed"}
	if !rep.Cold.Measured {
		for _, r := range rep.Formats {
			r.ColdIndexOpenUs, r.ColdRandomReadP50Us, r.ColdRandomReadP99Us, r.ColdRandomReadMaxUs = 0, 0, 0, 0
			r.ColdRandomReadP50Reps, r.ColdResidentBytes = nil, 0
			r.ColdReads, r.ColdFoundResident = 0, 0
		}
	}
}

// failure lists the formats that failed in rep.Failed and returns an error
// wrapping ErrFailed that names each with its error, or nil.
func (rep *Report) failure() error {
	var msgs []string
	for _, r := range rep.Formats {
		if r.Error != "" {
			rep.Failed = append(rep.Failed, r.Name)
			msgs = append(msgs, r.Name+": "+r.Error)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrFailed, strings.Join(msgs, "; "))
}

func (r *FormatResult) fail(err error) {
	if r.formatErr == nil {
		r.formatErr = err
		r.Error = err.Error()
	}
}

func describe(src *source, where string, sy *Synthetic) Dataset {
	d := Dataset{Source: where, Fold: src.fold, Shards: len(src.shards), Samples: len(src.samples),
		PayloadBytes: src.payload, Synthetic: sy, MinSize: src.samples[0].size}
	for _, s := range src.samples {
		d.MinSize = min(d.MinSize, s.size)
		d.MaxSize = max(d.MaxSize, s.size)
	}
	for _, p := range src.shards {
		if st, err := os.Stat(p); err == nil {
			d.TarBytes += st.Size()
		}
	}
	d.MeanSize = float64(src.payload) / float64(len(src.samples))
	return d
}

// buildFormat converts the source reps times (the median is reported),
// keeping the last output, and measures its files.
func buildFormat(ctx context.Context, f *format, res *FormatResult, src *source, reps, workers int) error {
	for range reps {
		if err := f.clean(); err != nil {
			return err
		}
		t := time.Now()
		if err := f.build(ctx, workers); err != nil {
			return err
		}
		res.BuildSecondsReps = append(res.BuildSecondsReps, time.Since(t).Seconds())
		// Write the output back before the next timing starts.
		if files, err := f.files(); err == nil {
			syncFiles(paths(files, false))
		}
	}
	res.BuildSeconds = median(res.BuildSecondsReps)
	res.BuildMBPerS = mbps(src.payload, res.BuildSeconds)
	files, err := f.files()
	if err != nil {
		return err
	}
	res.Files = files
	for _, fi := range files {
		if fi.Role == "index" {
			res.IndexBytes += fi.Bytes
		} else {
			res.Bytes += fi.Bytes
		}
	}
	res.TotalBytes = res.Bytes + res.IndexBytes
	res.OverheadPct = 100 * float64(res.TotalBytes-src.payload) / float64(max(src.payload, 1))
	err = filepath.Walk(f.dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			res.WrittenBytes += fi.Size() // Lstat: a link counts as itself
		}
		return err
	})
	if err != nil {
		return err
	}
	r, err := f.open() // sets f.holds
	if err != nil {
		return err
	}
	r.close()
	for _, h := range f.holds {
		if h {
			res.Samples++
		}
	}
	res.built = true
	return nil
}

// paths lists the distinct files; with shared false, only those the
// conversion wrote.
func paths(files []fileInfo, shared bool) []string {
	var out []string
	for _, f := range files {
		if (shared || !f.Shared) && !slices.Contains(out, f.Path) {
			out = append(out, f.Path)
		}
	}
	return out
}

// readList draws n samples (with replacement, seeded) from those every
// built format holds: the same list for every format.
func readList(src *source, fmts []*format, res []*FormatResult, n int, seed int64) []int {
	var common []int
	for i := range src.samples {
		ok := true
		for k, f := range fmts {
			if res[k].built && !f.holds[i] {
				ok = false
				break
			}
		}
		if ok {
			common = append(common, i)
		}
	}
	if len(common) == 0 {
		return nil
	}
	rng := rand.New(rand.NewSource(seed))
	list := make([]int, n)
	for k := range list {
		list[k] = common[rng.Intn(len(common))]
	}
	return list
}

func countDistinct(list []int) int {
	seen := map[int]bool{}
	for _, i := range list {
		seen[i] = true
	}
	return len(seen)
}

// corrupt flips one byte of the named format's copy of a sample's payload.
func corrupt(fmts []*format, res []*FormatResult, name string, list []int, src *source) error {
	for k, f := range fmts {
		if f.name != name {
			continue
		}
		if !f.copies {
			return fmt.Errorf("corrupt %s: its data are the source's own tars; refusing to change them", name)
		}
		if !res[k].built {
			return fmt.Errorf("corrupt %s: it was not built", name)
		}
		for _, i := range list {
			if src.samples[i].size == 0 {
				continue
			}
			path, off, err := f.locate(i)
			if err != nil {
				return err
			}
			fh, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				return err
			}
			var b [1]byte
			_, err = fh.ReadAt(b[:], off)
			if err == nil {
				b[0] ^= 0x5a
				_, err = fh.WriteAt(b[:], off)
			}
			if cerr := fh.Close(); err == nil {
				err = cerr
			}
			res[k].CorruptedForTest = true
			return err
		}
		return fmt.Errorf("corrupt %s: no non-empty sample in the read list", name)
	}
	return fmt.Errorf("corrupt %s: not among the formats benchmarked", name)
}

// check compares bytes read with the source's.
func check(src *source, i int, data []byte) error {
	s := &src.samples[i]
	if int64(len(data)) != s.size {
		return fmt.Errorf("wrong bytes: sample %d (%s): %d bytes read, the source has %d", i, s.name, len(data), s.size)
	}
	if h := xxhash.Sum64(data); h != s.hash {
		return fmt.Errorf("wrong bytes: sample %d (%s): xxh64 %016x, the source's is %016x", i, s.name, h, s.hash)
	}
	return nil
}

type coldState struct {
	enabled, measured bool
	note              string
}

// measureReads times opening, random reads (warm, then cold) and the
// sequential read of one format, checking every read.
func measureReads(ctx context.Context, f *format, res *FormatResult, src *source, list []int, reps, coldN int, cold *coldState) error {
	m := &measure{ctx: ctx, f: f, res: res, src: src, list: list, lat: make([]float64, len(list)),
		checks: make([]float64, 0, len(list))}
	if err := m.opens(reps); err != nil {
		return err
	}
	if err := m.warmReads(reps); err != nil {
		return err
	}
	if cold.enabled && len(list) > 0 {
		if err := m.coldReads(reps, coldList(list, coldN), cold); err != nil {
			return err
		}
	}
	return m.sequential(reps)
}

// measure is one format's read measurements. The phases share one read
// buffer (a format that reuses it does not allocate per read) and the
// latencies slice.
type measure struct {
	ctx  context.Context
	f    *format
	res  *FormatResult
	src  *source
	list []int
	buf  []byte
	lat  []float64
	// checks: the time of each check, for the first len(list) reads.
	checks []float64
	// own: the time of the format's own check of each read in the warm-up.
	own []float64
}

// opens times the index open: one warm-up, then per repetition the median
// of 5 opens.
func (m *measure) opens(reps int) error {
	r, err := m.f.open()
	if err != nil {
		return err
	}
	r.close()
	for range reps {
		var ts []float64
		for range 5 {
			t := time.Now()
			r, err := m.f.open()
			d := time.Since(t)
			if err != nil {
				return err
			}
			r.close()
			ts = append(ts, us(d))
		}
		m.res.IndexOpenUsReps = append(m.res.IndexOpenUsReps, median(ts))
	}
	m.res.IndexOpenUs = median(m.res.IndexOpenUsReps)
	return nil
}

// pass reads the list once through r, checking every read, and records
// each read's latency in lat unless lat is nil (a warm-up).
func (m *measure) pass(r opened, lat []float64) error {
	for k, i := range m.list {
		if k%256 == 0 && m.ctx.Err() != nil {
			return m.ctx.Err()
		}
		t := time.Now()
		data, err := r.read(i, m.buf)
		d := time.Since(t)
		if err != nil {
			return fmt.Errorf("reading sample %d (%s): %w", i, m.src.samples[i].name, err)
		}
		if err := m.check(i, data); err != nil {
			return err
		}
		if lat != nil {
			lat[k] = us(d)
		} else if err := m.ownCheck(r, i, data); err != nil {
			return err
		}
	}
	return nil
}

// check checks a read's bytes, timing the check apart from the read.
func (m *measure) check(i int, data []byte) error {
	t := time.Now()
	err := check(m.src, i, data)
	if m.checks != nil && len(m.checks) < cap(m.checks) {
		m.checks = append(m.checks, us(time.Since(t)))
	}
	if err != nil {
		return err
	}
	m.res.ReadsChecked++
	m.buf = data
	return nil
}

// ownCheck runs and times the format's own check of a read.
func (m *measure) ownCheck(r opened, i int, data []byte) error {
	t := time.Now()
	what, err := r.verify(i, data)
	d := time.Since(t)
	if err != nil {
		return err
	}
	if what != "" {
		m.res.OwnCheck = what
		m.own = append(m.own, us(d))
	}
	return nil
}

// warmReads times the random reads with the pages cached: a checked
// warm-up pass, then the timed passes through one open reader.
func (m *measure) warmReads(reps int) error {
	res := m.res
	r, err := m.f.open()
	if err != nil {
		return err
	}
	err = m.pass(r, nil)
	for rep := 0; rep < reps && err == nil; rep++ {
		if err = m.pass(r, m.lat); err == nil {
			p50, p99, mx := percentiles(m.lat)
			res.RandomReadP50UsReps = append(res.RandomReadP50UsReps, p50)
			res.RandomReadP99UsReps = append(res.RandomReadP99UsReps, p99)
			res.RandomReadMaxUsReps = append(res.RandomReadMaxUsReps, mx)
		}
	}
	r.close()
	if err != nil {
		return err
	}
	res.RandomReads = len(m.list)
	res.RandomReadP50Us = median(res.RandomReadP50UsReps)
	res.RandomReadP99Us = median(res.RandomReadP99UsReps)
	res.RandomReadMaxUs = median(res.RandomReadMaxUsReps)
	res.CheckP50Us, _, _ = percentiles(m.checks)
	res.OwnCheckP50Us, _, _ = percentiles(m.own)
	if len(m.list) > 0 {
		res.RandomReadsPerSec = 1e6 / mean(m.lat)
	}
	return nil
}

// coldList is the first n distinct samples of the read list: a second
// read of a sample would find its pages cached.
func coldList(list []int, n int) []int {
	var out []int
	seen := map[int]bool{}
	for _, i := range list {
		if len(out) == n {
			break
		}
		if !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	return out
}

// coldReads times reads that miss the page cache: per repetition, drop
// the format's pages (and check they are gone), open the format (so a
// mapping is made after the drop), then read each sample of list once,
// having checked with mincore that none of its pages is resident; a read
// whose pages are (read ahead with an earlier one) is checked but not
// timed, and counted. Where the pages cannot be dropped, cold says why and
// no format's cold figures are reported.
func (m *measure) coldReads(reps int, list []int, cold *coldState) error {
	res := m.res
	files := paths(res.Files, true)
	var opens, lat, p50s []float64
	for range reps {
		resident, err := dropPages(files)
		if err != nil {
			cold.enabled, cold.note = false, "not measured: "+err.Error()
			break
		}
		if resident > max(res.TotalBytes/100, 1<<20) {
			cold.enabled = false
			cold.note = fmt.Sprintf("not measured: after posix_fadvise(DONTNEED), %d of %s's %d bytes were still in the page cache (tmpfs, or pages mapped elsewhere)",
				resident, m.f.name, res.TotalBytes)
			break
		}
		res.ColdResidentBytes = max(res.ColdResidentBytes, resident)
		t := time.Now()
		r, err := m.f.open()
		if err != nil {
			return err
		}
		opens = append(opens, us(time.Since(t)))
		rep, err := m.coldPass(r, list)
		r.close()
		if err != nil {
			return fmt.Errorf("cold: %w", err)
		}
		lat = append(lat, rep...)
		p50, _, _ := percentiles(rep)
		p50s = append(p50s, p50)
	}
	if !cold.enabled {
		return nil
	}
	if len(lat) == 0 {
		cold.enabled = false
		cold.note = fmt.Sprintf("not measured: %s's pages were resident at every read after they were dropped", m.f.name)
		return nil
	}
	cold.measured = true
	res.ColdReads = len(lat)
	res.ColdIndexOpenUs = median(opens)
	res.ColdRandomReadP50Us, res.ColdRandomReadP99Us, res.ColdRandomReadMaxUs = percentiles(lat)
	res.ColdRandomReadP50Reps = p50s
	return nil
}

// coldPass reads each sample of list once through r, and returns the
// latencies of the reads that found none of their pages resident.
func (m *measure) coldPass(r opened, list []int) ([]float64, error) {
	probe := newProbe()
	defer probe.close()
	var lat []float64
	for _, i := range list {
		if m.ctx.Err() != nil {
			return nil, m.ctx.Err()
		}
		path, off, size, err := r.where(i)
		if err != nil {
			return nil, err
		}
		resident, err := probe.resident(path, off, size)
		if err != nil {
			return nil, err
		}
		t := time.Now()
		data, err := r.read(i, m.buf)
		d := time.Since(t)
		if err != nil {
			return nil, fmt.Errorf("reading sample %d (%s): %w", i, m.src.samples[i].name, err)
		}
		if err := m.check(i, data); err != nil {
			return nil, err
		}
		if resident {
			m.res.ColdFoundResident++
		} else {
			lat = append(lat, us(d))
		}
	}
	return lat, nil
}

// sequential times reading every sample the format holds, in its own
// order: a checked warm-up pass, then timed passes (time spent hashing for
// the check is measured and taken out).
func (m *measure) sequential(reps int) error {
	res := m.res
	var secs []float64
	for rep := -1; rep < reps; rep++ {
		n, bytes, elapsed, hashTime, err := m.scanOnce()
		if err != nil {
			return err
		}
		if rep >= 0 {
			secs = append(secs, elapsed.Seconds())
			res.SequentialMBPerSReps = append(res.SequentialMBPerSReps, mbps(bytes, elapsed.Seconds()))
			res.sequentialHashSeconds += hashTime.Seconds()
		}
		res.SequentialSamples, res.SequentialBytes = n, bytes
	}
	res.SequentialSeconds = median(secs)
	res.SequentialMBPerS = mbps(res.SequentialBytes, res.SequentialSeconds)
	return nil
}

// scanOnce is one sequential pass: the samples and bytes read, the time it
// took less the time spent checking, and that time.
func (m *measure) scanOnce() (n int, bytes int64, elapsed, hashTime time.Duration, err error) {
	r, err := m.f.open()
	if err != nil {
		return 0, 0, 0, 0, err
	}
	t := time.Now()
	err = r.scan(m.ctx, m.buf, func(i int, data []byte) error {
		h := time.Now()
		err := m.check(i, data)
		hashTime += time.Since(h)
		if err != nil {
			return err
		}
		n++
		bytes += int64(len(data))
		return nil
	})
	elapsed = time.Since(t) - hashTime
	r.close()
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("sequential read: %w", err)
	}
	if n != m.res.Samples {
		return 0, 0, 0, 0, fmt.Errorf("sequential read: %d samples read, the format holds %d", n, m.res.Samples)
	}
	return n, bytes, elapsed, hashTime, nil
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

func mbps(bytes int64, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return float64(bytes) / 1e6 / secs
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func mean(v []float64) float64 {
	var t float64
	for _, x := range v {
		t += x
	}
	return t / float64(max(len(v), 1))
}

// percentiles returns the p50, p99 (nearest rank) and maximum.
func percentiles(v []float64) (p50, p99, mx float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	rank := func(p float64) float64 {
		k := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(k, 0), len(s)-1)]
	}
	return rank(0.50), rank(0.99), s[len(s)-1]
}
