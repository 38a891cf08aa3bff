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
