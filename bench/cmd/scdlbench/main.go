package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/itarconv/itarconv/bench"
	"github.com/itarconv/itarconv/formats/scdl"
	"github.com/itarconv/itarconv/testing/testutil"
)

const (
	targetCellRate = 200e3 // cells/s, per-cell export
	targetCatRatio = 2.0   // archive mode (either way) time / cat time
	targetRSSRatio = 1.5   // peak RSS at N cells / at N/10 cells
	genes          = 20000 // col_ptr uint16
)

func main() { os.Exit(run()) }

// genEnv makes the program a generator: the archive is written by a child
// process, so that this one stays small. Children start as a copy of
// their parent (vfork), and Linux counts the parent's pages in a child's
// peak RSS: a large parent would inflate every measurement.
const genEnv = "SCDLBENCH_GENERATE"

type result struct {
	wall float64
	rss  int64 // KiB
}

type row struct {
	what    string
	walls   []float64
	rss     int64
	items   int64
	unit    string
	bytes   int64
	baseRef string // the cat row this is compared with
	// run, for the pairs with Barecat and TBL, times one conversion and
	// names its output.
	run func() (result, string, error)
	// via names the two rows of the route through tar this pair replaces.
	via [2]string
}

func (r *row) median() float64 {
	s := slices.Clone(r.walls)
	slices.Sort(s)
	return s[len(s)/2]
}

func run() int {
	if g := os.Getenv(genEnv); g != "" {
		var path string
		var n, per int
		fmt.Sscanf(g, "%d %d", &n, &per)
		path = os.Getenv(genEnv + "_PATH")
		if err := generate(path, n, per); err != nil {
			fmt.Fprintln(os.Stderr, "scdlbench:", err)
			return 1
		}
		return 0
	}
	dir := flag.String("dir", "", "keep the generated archives here and reuse them (default: a temporary directory, removed afterwards)")
	cells := flag.Int("cells", 1_000_000, "cells of the synthetic archive")
	per := flag.Int("per", 100, "average non-zero values per cell")
	reps := flag.Int("reps", 3, "timed runs per tool (the median is reported)")
	quick := flag.Bool("quick", false, "smoke run: 20k cells, one rep")
	flag.Parse()
	if *quick {
		*cells, *reps = 20000, 1
	}
	if err := measure(*dir, *cells, *per, *reps); err != nil {
		fmt.Fprintln(os.Stderr, "scdlbench:", err)
		return 1
	}
	return 0
}

func measure(dir string, cells, per, reps int) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "scdlbench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	bin := filepath.Join(dir, "itarconv")
	if err := bench.BuildItarconv(bin); err != nil {
		return err
	}
	big := filepath.Join(dir, fmt.Sprintf("synth-%d", cells))
	small := filepath.Join(dir, fmt.Sprintf("synth-%d", cells/10))
	for _, a := range []struct {
		path string
		n    int
	}{{big, cells}, {small, cells / 10}} {
		if _, err := os.Stat(a.path); err == nil {
			continue
		}
		fmt.Fprintf(os.Stderr, "generating %s (%d cells)...\n", a.path, a.n)
		cmd := exec.Command(os.Args[0])
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d %d", genEnv, a.n, per), genEnv+"_PATH="+a.path)
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("generating %s: %v\n%s", a.path, err, out)
		}
	}
	a, err := scdl.Open(big)
	if err != nil {
		return err
	}
	files, nnz := a.Files(), a.NNZ()
	a.Close()
	var abs []string
	var srcBytes int64
	for _, f := range files {
		p := filepath.Join(big, filepath.FromSlash(f))
		st, _ := os.Stat(p)
		srcBytes += st.Size()
		abs = append(abs, p)
	}
	work := filepath.Join(dir, "work")
	os.RemoveAll(work)
	if err := os.MkdirAll(work, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(work)
	cellsOut, smallOut := filepath.Join(work, "cells"), filepath.Join(work, "cells-small")
	archOut, back := filepath.Join(work, "arch"), filepath.Join(work, "back")
	catOut := filepath.Join(work, "cat.out")

	// Outputs that later runs read are kept from an untimed first run.
	if _, err := itarconv(bin, "convert", "-q", "--scdl-mode", "archive", big, archOut); err != nil {
		return err
	}
	if _, err := itarconv(bin, "convert", "-q", big, cellsOut); err != nil {
		return err
	}
	if err := checkRoundTrip(bin, big, cellsOut, filepath.Join(work, "check1")); err != nil {
		return err
	}
	if err := checkRoundTrip(bin, big, archOut, filepath.Join(work, "check2")); err != nil {
		return err
	}
	shards, _ := filepath.Glob(filepath.Join(archOut, "scdl_*.tar"))
	var shardBytes int64
	for _, s := range shards {
		st, _ := os.Stat(s)
		shardBytes += st.Size()
	}

	rows := []*row{
		{what: "cat archive files > f && sync f", items: int64(len(files)), unit: "files", bytes: srcBytes},
		{what: "convert --scdl-mode archive SCDL DIR", items: int64(len(files)), unit: "files", bytes: srcBytes, baseRef: "cat archive files > f && sync f"},
		{what: "cat scdl shards > f && sync f", items: int64(len(shards)), unit: "shards", bytes: shardBytes},
		{what: "convert --to scdl DIR(scdl) SCDL", items: int64(len(files)), unit: "files", bytes: shardBytes, baseRef: "cat scdl shards > f && sync f"},
		{what: "convert SCDL DIR (cells)", items: int64(cells), unit: "cells", bytes: srcBytes},
		{what: fmt.Sprintf("convert SCDL DIR (cells, %d cells)", cells/10), items: int64(cells / 10), unit: "cells"},
		{what: "convert --to scdl DIR(cells) SCDL", items: int64(cells), unit: "cells"},
	}
	pairs, err := pairRows(bin, big, cellsOut, work, cells)
	if err != nil {
		return err
	}
	rows = append(rows, pairs...)
	for rep := 0; rep < reps; rep++ {
		for i, r := range rows {
			var res result
			var err error
			var out string
			switch i {
			default:
				res, out, err = r.run()
			case 0:
				out = catOut
				res, err = catSync(abs, out)
			case 1:
				out = filepath.Join(work, "arch2")
				res, err = itarconv(bin, "convert", "-q", "--scdl-mode", "archive", big, out)
			case 2:
				out = catOut
				res, err = catSync(shards, out)
			case 3:
				out = back
				res, err = itarconv(bin, "convert", "-q", "--to", "scdl", archOut, out)
			case 4:
				out = filepath.Join(work, "cells2")
				res, err = itarconv(bin, "convert", "-q", big, out)
			case 5:
				out = smallOut
				res, err = itarconv(bin, "convert", "-q", small, out)
			case 6:
				out = back
				res, err = itarconv(bin, "convert", "-q", "--to", "scdl", cellsOut, out)
			}
			if err != nil {
				return err
			}
			r.walls = append(r.walls, res.wall)
			r.rss = max(r.rss, res.rss)
			os.RemoveAll(out)
			shards, _ := filepath.Glob(out + "-shard-*") // a Barecat archive's
			for _, s := range shards {
				os.Remove(s)
			}
			syscall.Sync()
		}
	}

	fmt.Printf("synthetic archive: %d cells, %d values (%.1f per cell), %d genes, %d files, %.0f MB; %d reps, medians\n\n",
		cells, nnz, float64(nnz)/float64(cells), genes, len(files), float64(srcBytes)/1e6, reps)
	w := tabwriter.NewWriter(os.Stdout, 0, 2, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "run\tseconds\trate\tMB/s\tpeak RSS MiB\tvs cat\t")
	byName := map[string]*row{}
	for _, r := range rows {
		byName[r.what] = r
		vs := ""
		if r.baseRef != "" {
			vs = fmt.Sprintf("%.2fx", r.median()/byName[r.baseRef].median())
		}
		mbps := ""
		if r.bytes > 0 {
			mbps = fmt.Sprintf("%.0f", float64(r.bytes)/1e6/r.median())
		}
		fmt.Fprintf(w, "%s\t%.2f\t%.0f %s/s\t%s\t%.0f\t%s\t\n", r.what, r.median(), float64(r.items)/r.median(), r.unit, mbps, float64(r.rss)/1024, vs)
	}
	w.Flush()
	fmt.Println()
	verdict := func(ok bool) string {
		if ok {
			return "ok"
		}
		return "FAIL"
	}
	cellRate := float64(cells) / rows[4].median()
	fmt.Printf("%-4s per-cell export: %.0f cells/s (target >= %.0f)\n", verdict(cellRate >= targetCellRate), cellRate, targetCellRate)
	r1 := rows[1].median() / rows[0].median()
	fmt.Printf("%-4s archive mode: %.2fx cat (target <= %.1fx)\n", verdict(r1 <= targetCatRatio), r1, targetCatRatio)
	r2 := rows[3].median() / rows[2].median()
	fmt.Printf("%-4s archive mode back: %.2fx cat (target <= %.1fx)\n", verdict(r2 <= targetCatRatio), r2, targetCatRatio)
	rr := float64(rows[4].rss) / float64(rows[5].rss)
	fmt.Printf("%-4s memory: peak RSS %.0f MiB at %d cells, %.0f MiB at %d (ratio %.2f, target <= %.1f)\n",
		verdict(rr <= targetRSSRatio), float64(rows[4].rss)/1024, cells, float64(rows[5].rss)/1024, cells/10, rr, targetRSSRatio)
	for _, r := range pairs {
		if r.via[0] == "" {
			continue
		}
		a, b := byName[r.via[0]], byName[r.via[1]]
		two := a.median() + b.median()
		fmt.Printf("%-4s %s: %.2fs, through tar %.2fs + %.2fs = %.2fs (target: no slower)\n",
			verdict(r.median() <= two), r.what, r.median(), a.median(), b.median(), two)
	}
	return nil
}

// pairRows are the conversions between SCDL and Barecat or TBL, each
// beside the two steps through a tar fold that it replaces. Their inputs
// are made once, untimed.
func pairRows(bin, big, cellsDir, work string, cells int) ([]*row, error) {
	bc, tb := filepath.Join(work, "in.barecat"), filepath.Join(work, "in.tbl")
	bcTar, tbTar := filepath.Join(work, "in-barecat-tar"), filepath.Join(work, "in-tbl-tar")
	for _, args := range [][]string{
		{"convert", "-q", big, bc},
		{"convert", "-q", big, tb},
		{"convert", "-q", "--fold", "train", bc, bcTar},
		{"convert", "-q", "--fold", "train", tb, tbTar},
	} {
		if _, err := itarconv(bin, args...); err != nil {
			return nil, err
		}
	}
	cellShards, _ := filepath.Glob(filepath.Join(cellsDir, "*.tar"))
	conv := func(out string, args ...string) func() (result, string, error) {
		return func() (result, string, error) {
			res, err := itarconv(bin, append(append([]string{"convert", "-q"}, args...), out)...)
			return res, out, err
		}
	}
	o := func(name string) string { return filepath.Join(work, name) }
	n := int64(cells)
	return []*row{
		{what: "convert DIR(cells) X.barecat", items: n, unit: "cells", run: conv(o("o.barecat"), cellShards...)},
		{what: "convert DIR(cells) X.tbl", items: n, unit: "cells", run: conv(o("o.tbl"), cellShards...)},
		{what: "convert X.barecat DIR", items: n, unit: "cells", run: conv(o("o-dir"), "--fold", "train", bc)},
		{what: "convert X.tbl DIR", items: n, unit: "cells", run: conv(o("o-dir"), "--fold", "train", tb)},
		{what: "convert --to scdl DIR(from Barecat) SCDL", items: n, unit: "cells", run: conv(o("o-scdl"), "--to", "scdl", "--fold", "train", bcTar)},
		{what: "convert --to scdl DIR(from TBL) SCDL", items: n, unit: "cells", run: conv(o("o-scdl"), "--to", "scdl", "--fold", "train", tbTar)},
		{what: "convert SCDL X.barecat", items: n, unit: "cells", run: conv(o("o.barecat"), big),
			via: [2]string{"convert SCDL DIR (cells)", "convert DIR(cells) X.barecat"}},
		{what: "convert SCDL X.tbl", items: n, unit: "cells", run: conv(o("o.tbl"), big),
			via: [2]string{"convert SCDL DIR (cells)", "convert DIR(cells) X.tbl"}},
		{what: "convert X.barecat SCDL", items: n, unit: "cells", run: conv(o("o-scdl"), "--to", "scdl", bc),
			via: [2]string{"convert X.barecat DIR", "convert --to scdl DIR(from Barecat) SCDL"}},
		{what: "convert X.tbl SCDL", items: n, unit: "cells", run: conv(o("o-scdl"), "--to", "scdl", tb),
			via: [2]string{"convert X.tbl DIR", "convert --to scdl DIR(from TBL) SCDL"}},
	}, nil
}

// checkRoundTrip converts out back and compares every file with src.
func checkRoundTrip(bin, src, out, back string) error {
	if _, err := itarconv(bin, "convert", "-q", "--to", "scdl", out, back); err != nil {
		return err
	}
	defer os.RemoveAll(back)
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if same, err := sameFile(p, filepath.Join(back, rel)); err != nil || !same {
			return fmt.Errorf("round trip through %s: %s differs (%v)", out, rel, err)
		}
		return nil
	})
}

// sameFile compares two files 1 MiB at a time (this process stays small:
// see genEnv).
func sameFile(a, b string) (bool, error) {
	fa, err := os.Open(a)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false, err
	}
	defer fb.Close()
	ba, bb := make([]byte, 1<<20), make([]byte, 1<<20)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		if ea != nil || eb != nil {
			return ea == eb || (ea == io.EOF || ea == io.ErrUnexpectedEOF) && (eb == io.EOF || eb == io.ErrUnexpectedEOF), nil
		}
	}
}

func itarconv(bin string, args ...string) (result, error) {
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start).Seconds()
	if err != nil {
		return result{}, fmt.Errorf("itarconv %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return result{wall, bench.MaxRSS(cmd.ProcessState) / 1024}, nil
}

func catSync(files []string, out string) (result, error) {
	args := append([]string{"-c", `cat "$@" > "$0" && sync "$0"`, out}, files...)
	cmd := exec.Command("sh", args...)
	start := time.Now()
	if b, err := cmd.CombinedOutput(); err != nil {
		return result{}, fmt.Errorf("cat: %v\n%s", err, b)
	}
	return result{time.Since(start).Seconds(), bench.MaxRSS(cmd.ProcessState) / 1024}, nil
}

// generate writes an archive of n cells of 0 to 2*per float32 values over
// 20000 genes, with a var_features index (cumulative_sum_index.npy and a
// Parquet footer giving the number of genes) and an obs_features label
// file, deterministically.
func generate(dir string, n, per int) error {
	files := []string{"var_features/cumulative_sum_index.npy", "var_features/dataframe_0.parquet"}
	w, err := scdl.Create(dir, scdl.WriterOptions{NGenes: []int{genes},
		FeatureIndices: []scdl.FeatureIndexInfo{{Name: scdl.VarFeatures, Length: uint64(n), DType: scdl.StringArray, Files: files}}})
	if err != nil {
		return err
	}
	defer w.Abort()
	seed := uint64(0x9e3779b97f4a7c15)
	next := func() uint64 {
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return seed
	}
	var values, gs []byte
	for i := 0; i < n; i++ {
		k := int(next() % uint64(2*per+1))
		values, gs = values[:0], gs[:0]
		start := int(next() % uint64(genes-k))
		for j := 0; j < k; j++ {
			values = binary.LittleEndian.AppendUint32(values, math.Float32bits(float32(1+(i+j)%50)))
			gs = binary.LittleEndian.AppendUint32(gs, uint32(start+j))
		}
		if err := w.AddRow(values, gs); err != nil {
			return err
		}
	}
	if err := w.AddFile(files[0], bytes.NewReader(scdl.CumSumIndex([]int{n}))); err != nil {
		return err
	}
	if err := w.AddFile(files[1], bytes.NewReader(testutil.FakeParquet(genes))); err != nil {
		return err
	}
	labels, _ := json.Marshal(map[string]any{"synthetic": true, "cells": n})
	if err := w.AddFile("obs_features/labels.json", bytes.NewReader(labels)); err != nil {
		return err
	}
	return w.Close()
}
