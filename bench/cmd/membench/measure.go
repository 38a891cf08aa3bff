package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/itarconv/itarconv/bench"
	_ "github.com/itarconv/itarconv/convert" // links every format into the registry
	"github.com/itarconv/itarconv/formats/registry"
)

// The target: peak RSS <= perMember * N + allowance at the largest size.
const (
	perMember = 64
	allowance = 128 << 20
)

const (
	shards     = 8
	fold       = "train"
	stampName  = "membench.json"
	workPrefix = "membench-work-"
)

// groups are the values of -only: those of the commands above, then every
// registered format that can be created and opened (Parquet, MDS, ...),
// whose commands formatSteps makes.
var groups = append([]string{"tar", "barecat", "tbl", "scdl", "compressed"}, registeredGroups()...)

// registeredGroups are the registered formats -only takes by name.
func registeredGroups() []string {
	var out []string
	for _, f := range registry.All() {
		if f.Create != nil && f.Open != nil && !slices.Contains([]string{"tar", "barecat", "tbl", "scdl"}, f.Name) {
			out = append(out, f.Name)
		}
	}
	return out
}

// formatSteps are the commands of a registered format: the fold into it
// and back (memory of both directions), and its inspect and verify.
func formatSteps(name string) []step {
	x := "{W}/x." + name
	out := "{W}/out-" + name
	return []step{
		{name: "convert --to " + name + " DIR X", group: name, args: []string{"convert", "-q", "--json", "--to", name, "{D}", x}, count: "members"},
		{name: "inspect X." + name, group: name, args: []string{"inspect", x}},
		{name: "verify X." + name, group: name, args: []string{"verify", "-q", x}},
		{name: "convert --to tar X." + name + " OUTDIR", group: name, args: []string{"convert", "-q", "--json", "--from", name, "--to", "tar", "--fold", fold, x, out}, count: "members",
			remove: []string{"out-" + name, "x." + name}},
	}
}

func init() {
	for _, g := range registeredGroups() {
		steps = append(steps, formatSteps(g)...)
	}
}

// An SCDL archive of N/3 cells converts to a fold of N members: three a
// cell (values, genes, metadata). Its cells hold 1 or 2 values.
const (
	membersPerCell = 3
	valuesPerCell  = 1
)

type config struct {
	dir   string // -dir: where folds are kept and reused ("" for none)
	base  string // where folds and outputs go (-dir or a temporary directory)
	sizes []int  // members per fold, ascending
	only  map[string]bool
	keep  bool
	bin   string    // an itarconv binary to use; "" builds one
	log   io.Writer // progress
}

// step is one command of the bench. In args, {D} stands for the fold's
// directory, {S} for the SCDL archive's, {Z} for the fold's shards
// gzip-compressed, {W} for the directory outputs go to and {KEY} for a
// member of the fold.
type step struct {
	name  string // as the table shows it
	group string
	args  []string
	// count, when set, is a field of the command's --json result that must
	// equal the number of members: the command saw every one of them.
	count string
	// unit is how many members make one of what count counts (0: 1).
	unit int
	// stdout, when set, is what the command must write to stdout; otherwise
	// stdout goes to /dev/null.
	catOut bool
	// remove lists outputs (under {W}) to delete once this step ran: a
	// Barecat archive is removed with its shards.
	remove []string
	// before are commands run first, untimed (a partitioned run's tasks).
	before [][]string
	// besideShards: the command writes files beside the fold's shards
	// (loaders' indexes), removed once it ran.
	besideShards bool
}

// mergeTasks is the number of tasks whose parts the merge step joins.
const mergeTasks = 4

func taskSteps() [][]string {
	var cmds [][]string
	for k := range mergeTasks {
		cmds = append(cmds, []string{"index", "-q", "--workers", "1", "--task", fmt.Sprintf("%d/%d", k, mergeTasks), "--out-dir", "{W}", "{D}"})
	}
	return cmds
}

var steps = []step{
	{name: "index DIR", group: "", args: []string{"index", "-q", "{D}"}},
	{name: "index --format all DIR", group: "tar", args: []string{"index", "-q", "--format", "all", "--out-dir", "{W}", "{D}"},
		besideShards: true, remove: []string{fold + ".taridx", fold + ".taridx.shards.json"}},
	{name: fmt.Sprintf("merge of %d index parts", mergeTasks), group: "tar", before: taskSteps(),
		args: []string{"merge", "-q", "{W}/" + fold + ".taridx"}, remove: []string{fold + ".taridx", fold + ".taridx.shards.json"}},
	{name: "verify DIR", group: "tar", args: []string{"verify", "-q", "{D}"}},
	{name: "verify --data DIR", group: "tar", args: []string{"verify", "-q", "--data", "{D}"}},
	{name: "ls DIR > /dev/null", group: "tar", args: []string{"ls", "{D}"}},
	{name: "cat DIR KEY.EXT", group: "tar", args: []string{"cat", "{D}", "{KEY}"}, catOut: true},
	{name: "inspect X.taridx", group: "tar", args: []string{"inspect", "{D}/" + fold + ".taridx"}},

	{name: "convert DIR X.barecat", group: "barecat", args: []string{"convert", "-q", "--json", "{D}", "{W}/x.barecat"}, count: "files"},
	{name: "inspect X.barecat", group: "barecat", args: []string{"inspect", "{W}/x.barecat"}},
	{name: "verify X.barecat", group: "barecat", args: []string{"verify", "-q", "{W}/x.barecat"}},
	{name: "convert X.barecat OUTDIR", group: "barecat", args: []string{"convert", "-q", "--json", "{W}/x.barecat", "{W}/out-barecat"}, count: "members",
		remove: []string{"out-barecat", "x.barecat"}},
	{name: "convert --wrap DIR Y.barecat", group: "barecat", args: []string{"convert", "-q", "--json", "--wrap", "{D}", "{W}/y.barecat"}, count: "files"},
	{name: "verify Y.barecat (wrapped)", group: "barecat", args: []string{"verify", "-q", "{W}/y.barecat"}, remove: []string{"y.barecat"}},

	{name: "convert DIR X.tbl (v2)", group: "tbl", args: []string{"convert", "-q", "--json", "{D}", "{W}/x.tbl"}, count: "samples"},
	{name: "inspect X.tbl", group: "tbl", args: []string{"inspect", "{W}/x.tbl"}},
	{name: "verify X.tbl", group: "tbl", args: []string{"verify", "-q", "{W}/x.tbl"}},
	{name: "convert X.tbl OUTDIR", group: "tbl", args: []string{"convert", "-q", "--json", "--fold", fold, "{W}/x.tbl", "{W}/out-tbl"}, count: "members",
		remove: []string{"out-tbl", "x.tbl"}},
	{name: "convert --lz4 DIR Z.tbl", group: "tbl", args: []string{"convert", "-q", "--json", "--lz4", "{D}", "{W}/z.tbl"}, count: "samples", remove: []string{"z.tbl"}},
	{name: "convert --tbl-version 1 DIR V1.tbl", group: "tbl", args: []string{"convert", "-q", "--json", "--tbl-version", "1", "{D}", "{W}/v1.tbl"}, count: "samples"},
	{name: "convert V1.tbl OUTDIR", group: "tbl", args: []string{"convert", "-q", "--json", "--fold", fold, "{W}/v1.tbl", "{W}/out-v1"}, count: "members",
		remove: []string{"out-v1", "v1.tbl"}},

	{name: "convert GZ_DIR X.tbl (v2)", group: "compressed", args: []string{"convert", "-q", "--json", "{Z}", "{W}/zx.tbl"}, count: "samples", remove: []string{"zx.tbl"}},
	{name: "convert GZ_DIR OUTDIR (unpacked fold)", group: "compressed", args: []string{"convert", "-q", "--json", "{Z}", "{W}/out-gz"}, count: "members", remove: []string{"out-gz"}},
	{name: "convert DIR - (tar stream)", group: "compressed", args: []string{"convert", "-q", "{D}", "-"}},

	{name: "inspect SCDL", group: "scdl", args: []string{"inspect", "{S}"}},
	{name: "convert SCDL OUTDIR (cells)", group: "scdl", args: []string{"convert", "-q", "--json", "{S}", "{W}/out-cells"}, count: "cells", unit: membersPerCell},
	{name: "convert --to scdl OUTDIR SCDL2 (cells)", group: "scdl", args: []string{"convert", "-q", "--json", "--to", "scdl", "{W}/out-cells", "{W}/back-scdl"}, count: "cells", unit: membersPerCell,
		remove: []string{"back-scdl", "out-cells"}},
	{name: "convert --scdl-mode archive SCDL OUTDIR", group: "scdl", args: []string{"convert", "-q", "--json", "--scdl-mode", "archive", "{S}", "{W}/out-archive"}, count: "cells", unit: membersPerCell,
		remove: []string{"out-archive"}},
}

// row is what one command gave at each size (same order as config.sizes).
type row struct {
	name string
	rss  []int64 // bytes; 0 where it failed
	wall []float64
	errs []string // "" where it succeeded
}

// dataset is the fold of n one-byte members the bench runs on.
func dataset(n int) bench.Dataset {
	return bench.Dataset{Name: fmt.Sprintf("membench-%d", n), Fold: fold, Members: n, Shards: shards, MinSize: 1, MaxSize: 1, Seed: 11}
}

// measure runs every selected command on a fold of each size and returns
// a row per command. A command that fails is recorded in its row, and the
// others still run; an error is returned only when the bench itself cannot
// go on (no binary, no fold, no disk).
func measure(cfg config) ([]*row, error) {
	bin := cfg.bin
	if bin == "" {
		binDir, err := os.MkdirTemp("", "membench-bin-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(binDir)
		bin = filepath.Join(binDir, "itarconv")
		t0 := time.Now()
		if err := bench.BuildItarconv(bin); err != nil {
			return nil, err
		}
		fmt.Fprintf(cfg.log, "built itarconv in %.1fs\n", time.Since(t0).Seconds())
	}
	var sel []step
	for _, s := range steps {
		if s.group == "" || cfg.only[s.group] {
			sel = append(sel, s)
		}
	}
	rows := make([]*row, len(sel))
	for i, s := range sel {
		rows[i] = &row{name: s.name, rss: make([]int64, len(cfg.sizes)), wall: make([]float64, len(cfg.sizes)), errs: make([]string, len(cfg.sizes))}
	}
	for si, n := range cfg.sizes {
		d := dataset(n)
		dir := filepath.Join(cfg.base, d.Name)
		t0 := time.Now()
		_, reused, err := bench.Prepare(d, dir, stampName)
		if err != nil {
			return nil, err
		}
		what := "generated"
		if reused {
			what = "reused"
		}
		fmt.Fprintf(cfg.log, "fold of %d one-byte members in %d shards: %s in %.1fs\n", n, shards, what, time.Since(t0).Seconds())
		// Linux counts a parent's resident pages in the peak RSS of a child
		// it forks: give back what generating took.
		debug.FreeOSMemory()

		var scdlDir string
		if cfg.only["scdl"] {
			t0 := time.Now()
			var reused bool
			if scdlDir, reused, err = prepareSCDL(cfg.base, n/membersPerCell); err != nil {
				return nil, err
			}
			what := "generated"
			if reused {
				what = "reused"
			}
			fmt.Fprintf(cfg.log, "SCDL archive of %d cells: %s in %.1fs\n", n/membersPerCell, what, time.Since(t0).Seconds())
		}

		work, err := os.MkdirTemp(cfg.base, workPrefix)
		if err != nil {
			return nil, err
		}
		var gzDir string
		if cfg.only["compressed"] {
			t0 := time.Now()
			gzDir = filepath.Join(work, "gz")
			if err := gzipShards(dir, gzDir); err != nil {
				os.RemoveAll(work)
				return nil, err
			}
			fmt.Fprintf(cfg.log, "the fold's shards gzip-compressed in %.1fs\n", time.Since(t0).Seconds())
		}
		key := fmt.Sprintf("s%07d.cls", n/2-1) // the last sample's
		expand := func(argv []string) []string {
			args := make([]string, len(argv))
			for k, a := range argv {
				args[k] = strings.NewReplacer("{D}", dir, "{S}", scdlDir, "{Z}", gzDir, "{W}", work, "{KEY}", key).Replace(a)
			}
			return args
		}
		for i, s := range sel {
			for _, b := range s.before {
				if out, err := exec.Command(bin, expand(b)...).CombinedOutput(); err != nil {
					os.RemoveAll(work)
					return nil, fmt.Errorf("itarconv %s: %v: %s", strings.Join(expand(b), " "), err, out)
				}
			}
			var inFold []string
			if s.besideShards {
				inFold, _ = filepath.Glob(filepath.Join(dir, "*"))
			}
			args := expand(s.args)
			r := rows[i]
			res, err := runStep(bin, args, s, n)
			if s.besideShards {
				if err := removeNew(dir, inFold); err != nil {
					os.RemoveAll(work)
					return nil, err
				}
			}
			r.rss[si], r.wall[si] = res.rss, res.wall
			status := fmt.Sprintf("%8.1f MiB %8.2f s", float64(res.rss)/(1<<20), res.wall)
			if err != nil {
				r.errs[si] = err.Error()
				status = "ERROR: " + err.Error()
			}
			fmt.Fprintf(cfg.log, "  %9d  %-36s %s\n", n, s.name, status)
			for _, o := range s.remove {
				if err := removeOutput(filepath.Join(work, o)); err != nil {
					os.RemoveAll(work)
					return nil, err
				}
			}
		}
		if err := os.RemoveAll(work); err != nil {
			return nil, err
		}
		// Without -dir or -keep nobody reuses the fold: free the disk for
		// the next, larger one.
		if cfg.dir == "" && !cfg.keep {
			if err := os.RemoveAll(dir); err != nil {
				return nil, err
			}
			if scdlDir != "" {
				if err := os.RemoveAll(scdlDir); err != nil {
					return nil, err
				}
				os.Remove(scdlDir + ".json")
			}
		}
	}
	return rows, nil
}

// gzipShards writes every .tar of dir gzip-compressed (fastest level:
// the bench measures reading them) into out, two at a time.
func gzipShards(dir, out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	shards, err := filepath.Glob(filepath.Join(dir, "*.tar"))
	if err != nil {
		return err
	}
	errs := make([]error, len(shards))
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, sh := range shards {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = gzipFile(sh, filepath.Join(out, filepath.Base(sh)+".gz"))
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func gzipFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	f, err := os.Create(dst)
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
	_, err = io.Copy(zw, in)
	if cerr := zw.Close(); err == nil {
		err = cerr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

type result struct {
	rss  int64
	wall float64
}

// runStep runs one command and checks what it reports.
func runStep(bin string, args []string, s step, n int) (result, error) {
	cmd := exec.Command(bin, args...)
	var stdout bytes.Buffer
	stderr := &headBuffer{max: 2048}
	cmd.Stderr = stderr
	if s.catOut || s.count != "" {
		cmd.Stdout = &stdout
	} else {
		devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		if err != nil {
			return result{}, err
		}
		defer devnull.Close()
		cmd.Stdout = devnull
	}
	start := time.Now()
	err := cmd.Run()
	res := result{wall: time.Since(start).Seconds()}
	if cmd.ProcessState != nil {
		res.rss = bench.MaxRSS(cmd.ProcessState)
	}
	what := "itarconv " + strings.Join(args, " ")
	if err != nil {
		return res, fmt.Errorf("%s: %v: %s", what, err, strings.TrimSpace(stderr.String()))
	}
	if s.catOut && stdout.Len() != 1 {
		return res, fmt.Errorf("%s: wrote %d bytes, the member holds 1", what, stdout.Len())
	}
	if s.count != "" {
		got, err := jsonCount(stdout.Bytes(), s.count)
		if err != nil {
			return res, fmt.Errorf("%s: %v", what, err)
		}
		if want := int64(n / max(s.unit, 1)); got != want {
			return res, fmt.Errorf("%s: %s is %d, want %d", what, s.count, got, want)
		}
	}
	return res, nil
}

// jsonCount reads the top-level number named field (any case) of a JSON
// object.
func jsonCount(b []byte, field string) (int64, error) {
	var m map[string]json.RawMessage
	if err := bench.Result(b, &m); err != nil {
		return 0, fmt.Errorf("reading its JSON result: %v", err)
	}
	for k, v := range m {
		if strings.EqualFold(k, field) {
			var n int64
			if err := json.Unmarshal(v, &n); err != nil {
				return 0, fmt.Errorf("%s in its JSON result: %v", field, err)
			}
			return n, nil
		}
	}
	return 0, fmt.Errorf("no %s in its JSON result %.200s", field, b)
}

// removeNew removes what dir holds beyond the paths it held.
func removeNew(dir string, held []string) error {
	now, err := filepath.Glob(filepath.Join(dir, "*"))
	if err != nil {
		return err
	}
	for _, p := range now {
		if !slices.Contains(held, p) {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// removeOutput removes a file or directory, and the shards beside it when
// it is a Barecat archive.
func removeOutput(path string) error {
	paths, _ := filepath.Glob(path + "-shard-*")
	for _, p := range append(paths, path) {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	return nil
}

// headBuffer keeps the first max bytes written to it: a failing command's
// first lines say why, and a chatty one cannot fill this process's memory.
type headBuffer struct {
	buf bytes.Buffer
	max int
}

func (h *headBuffer) Write(p []byte) (int, error) {
	if room := h.max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (h *headBuffer) String() string { return h.buf.String() }

// sizeLabel writes a member count the way the table heads it: 375k, 3M.
func sizeLabel(n int) string {
	switch {
	case n >= 1e6 && n%1e6 == 0:
		return fmt.Sprintf("%dM", n/1e6)
	case n >= 1e6:
		return fmt.Sprintf("%.2gM", float64(n)/1e6)
	case n >= 1e3 && n%1e3 == 0:
		return fmt.Sprintf("%dk", n/1e3)
	}
	return strconv.Itoa(n)
}

// printTable writes the table and tells whether every command passed at the
// largest size.
func printTable(w io.Writer, sizes []int, rows []*row) bool {
	n := sizes[len(sizes)-1]
	limit := int64(perMember)*int64(n) + allowance
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	// tabwriter aligns every column right: pad the commands' names so
	// that they read left-aligned.
	width := len("command")
	for _, r := range rows {
		width = max(width, len(r.name))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-len(s)) }
	head := []string{pad("command")}
	for _, s := range sizes {
		head = append(head, "RSS MiB "+sizeLabel(s))
	}
	for _, s := range sizes {
		head = append(head, "s "+sizeLabel(s))
	}
	head = append(head, "B/member "+sizeLabel(n), "limit MiB", "verdict")
	if len(sizes) > 1 {
		head = append(head, "growth B/member", "RSS "+sizeLabel(n)+"/"+sizeLabel(sizes[0]))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	all := true
	for _, r := range rows {
		cells := []string{pad(r.name)}
		failed := false
		for i := range sizes {
			if r.errs[i] != "" {
				failed = true
				cells = append(cells, "error")
			} else {
				cells = append(cells, fmt.Sprintf("%.1f", float64(r.rss[i])/(1<<20)))
			}
		}
		for i := range sizes {
			cells = append(cells, fmt.Sprintf("%.2f", r.wall[i]))
		}
		last := r.rss[len(sizes)-1]
		verdict := bench.Verdict(!failed && last > 0 && last <= limit)
		if failed {
			verdict = "ERROR"
		}
		all = all && verdict == bench.Verdict(true)
		cells = append(cells, fmt.Sprintf("%.1f", float64(max(0, last-allowance))/float64(n)),
			fmt.Sprintf("%.1f", float64(limit)/(1<<20)), verdict)
		if k := len(sizes); k > 1 {
			growth, ratio := "-", "-"
			if !failed && r.rss[0] > 0 {
				growth = fmt.Sprintf("%.1f", float64(r.rss[k-1]-r.rss[0])/float64(sizes[k-1]-sizes[0]))
				ratio = fmt.Sprintf("%.2fx", float64(r.rss[k-1])/float64(r.rss[0]))
			}
			cells = append(cells, growth, ratio)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
	fmt.Fprintf(w, "RSS: peak resident memory of the itarconv process (ru_maxrss); s: its wall time; folds of one-byte members in %d shards.\n", shards)
	fmt.Fprintf(w, "B/member %s = (RSS - 128 MiB) / %d (0 when under 128 MiB); target: RSS <= %d B x %d members + 128 MiB = limit.\n",
		sizeLabel(n), n, perMember, n)
	if k := len(sizes); k > 1 {
		fmt.Fprintf(w, "growth B/member = (RSS %s - RSS %s) / (%d - %d): what each further member costs; RSS %s/%s: memory flat in members is at most 1.25x from 1M to 10M.\n",
			sizeLabel(n), sizeLabel(sizes[0]), n, sizes[0], sizeLabel(n), sizeLabel(sizes[0]))
	}
	return all
}
