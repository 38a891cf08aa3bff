// Command membench measures the peak resident memory of every itarconv
// command, each convert direction included, on folds of one-byte members at
// several sizes, side by side in one run, and checks the memory target:
// at the largest size N, a command's peak RSS stays within
// 64 bytes per member + 128 MiB.
//
//	go run ./bench/cmd/membench [-dir D] [-sizes 375000,3000000] [-only tar,barecat,tbl,scdl,compressed] [-keep] [-quick]
//
// For each size N it generates (or, under -dir, reuses) a fold of N
// one-byte members in 8 tar shards: samples sNNNNNNN of two members,
// .jpg and .cls, so that every member has an extension the index keeps;
// and an SCDL archive of N/3 cells of one or two values, which converts to
// a fold of N members (three a cell).
// Then it runs every command once, as a child process of the itarconv
// binary it builds from this module, and takes the child's peak RSS from its
// rusage (ru_maxrss) and its wall time. Each output is removed right after
// its command (and the commands that read it) ran, so that the disk holds
// one copy of the data at a time besides the input: about 1 KiB per member
// for the shards, as much again for a tar output.
//
// The table has a row per command: its peak RSS at each size, its wall time
// at each size, (RSS - 128 MiB) / N at the largest size, the limit
// 64 N + 128 MiB and the verdict. The exit status is 0 when every command
// succeeded and passed, 1 when one failed or missed the target, 2 on bad
// flags.
package main

import (
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

func main() { os.Exit(run()) }

func run() int {
	if status, ok := generateChild(); ok {
		return status
	}
	var cfg config
	flag.StringVar(&cfg.dir, "dir", "", "keep the generated folds in this directory and reuse them on later runs (default: a temporary directory, removed afterwards)")
	sizes := flag.String("sizes", "375000,3000000", "members per fold, a comma-separated list (even numbers); the target is checked at the largest")
	only := flag.String("only", strings.Join(groups, ","), "run only these groups of commands, a comma-separated list of: "+strings.Join(groups, ", ")+" (index runs always: the other commands read its output)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the generated folds (without -dir: print where they are)")
	quick := flag.Bool("quick", false, "smoke run: sizes 20000,160000 (the verdicts mean little at that size)")
	flag.Parse()
	if flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "membench: no arguments expected")
		return 2
	}
	sizesSet := false
	flag.Visit(func(f *flag.Flag) { sizesSet = sizesSet || f.Name == "sizes" })
	if *quick && !sizesSet {
		*sizes = "20000,160000"
	}
	var err error
	if cfg.sizes, err = parseSizes(*sizes); err != nil {
		fmt.Fprintf(os.Stderr, "membench: -sizes: %v\n", err)
		return 2
	}
	if cfg.only, err = parseOnly(*only); err != nil {
		fmt.Fprintf(os.Stderr, "membench: -only: %v\n", err)
		return 2
	}

	base := cfg.dir
	if base == "" {
		tmp, err := os.MkdirTemp("", "membench-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "membench: %v\n", err)
			return 1
		}
		base = tmp
		if cfg.keep {
			fmt.Printf("folds kept in %s\n", base)
		} else {
			defer os.RemoveAll(base)
		}
	}
	// The outputs take gigabytes at 3M members: an interrupted run must not
	// leave them behind. The children get the terminal's signal themselves.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sigs
		matches, _ := filepath.Glob(filepath.Join(base, workPrefix+"*"))
		for _, m := range matches {
			os.RemoveAll(m)
		}
		if cfg.dir == "" && !cfg.keep {
			os.RemoveAll(base)
		}
		os.Exit(130)
	}()

	cfg.base = base
	cfg.log = os.Stdout
	rows, err := measure(cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "membench: %v\n", err)
		return 1
	}
	fmt.Println()
	if !printTable(os.Stdout, cfg.sizes, rows) {
		return 1
	}
	return 0
}

func parseSizes(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 2*shards || n%2 != 0 {
			return nil, fmt.Errorf("%q is not an even number of members, at least %d", f, 2*shards)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func parseOnly(s string) (map[string]bool, error) {
	only := map[string]bool{}
	for _, g := range strings.Split(s, ",") {
		g = strings.TrimSpace(g)
		if !slices.Contains(groups, g) {
			return nil, fmt.Errorf("%q is not one of %s", g, strings.Join(groups, ", "))
		}
		only[g] = true
	}
	return only, nil
}
