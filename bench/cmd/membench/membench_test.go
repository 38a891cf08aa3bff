package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/itarconv/itarconv/bench"
)

// TestMain lets the test binary be the SCDL generator that measure starts
// as a child.
func TestMain(m *testing.M) {
	if status, ok := generateChild(); ok {
		os.Exit(status)
	}
	os.Exit(m.Run())
}

// TestMeasureTiny runs the whole bench on two tiny folds: every command
// succeeds, has a peak RSS at every size, and the table lists it with a
// verdict.
func TestMeasureTiny(t *testing.T) {
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "itarconv")
	if err := bench.BuildItarconv(bin); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cfg := config{
		base:  tmp,
		sizes: []int{200, 400},
		only:  map[string]bool{},
		bin:   bin,
		log:   &log,
	}
	for _, g := range groups {
		cfg.only[g] = true // the registered formats' too
	}
	rows, err := measure(cfg)
	if err != nil {
		t.Fatalf("measure: %v\n%s", err, log.Bytes())
	}
	if len(rows) != len(steps) {
		t.Fatalf("%d rows, want one per command (%d)", len(rows), len(steps))
	}
	for i, r := range rows {
		if r.name != steps[i].name {
			t.Errorf("row %d is %q, want %q", i, r.name, steps[i].name)
		}
		for k, n := range cfg.sizes {
			if r.errs[k] != "" {
				t.Errorf("%s at %d members: %s", r.name, n, r.errs[k])
			}
			if r.rss[k] <= 0 {
				t.Errorf("%s at %d members: peak RSS %d, want > 0", r.name, n, r.rss[k])
			}
		}
	}
	var out bytes.Buffer
	if !printTable(&out, cfg.sizes, rows) {
		t.Errorf("a command misses 64 B a member + 128 MiB at 400 members:\n%s", out.Bytes())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if !strings.Contains(lines[0], "RSS MiB 200") || !strings.Contains(lines[0], "RSS MiB 400") {
		t.Errorf("head %q lacks a RSS column per size", lines[0])
	}
	for i, s := range steps {
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), s.name) || !strings.Contains(lines[i+1], " PASS ") {
			t.Errorf("table line %d does not list %q with PASS:\n%s", i+1, s.name, out.Bytes())
		}
	}
	// Nothing is left behind but the binary: outputs, work directories and,
	// without -dir or -keep, the folds are removed.
	left, _ := filepath.Glob(filepath.Join(tmp, "*"))
	if len(left) != 1 || left[0] != bin {
		t.Errorf("left behind: %v", left)
	}
}

// TestFailedCommand: a command that fails is an ERROR row and the table's
// verdict is a failure, whatever its memory.
func TestFailedCommand(t *testing.T) {
	rows := []*row{
		{name: "ok", rss: []int64{10 << 20}, wall: []float64{1}, errs: []string{""}},
		{name: "broken", rss: []int64{10 << 20}, wall: []float64{1}, errs: []string{"exit status 1"}},
	}
	var out bytes.Buffer
	if printTable(&out, []int{1000}, rows) {
		t.Fatalf("a failed command passed:\n%s", out.Bytes())
	}
	if !strings.Contains(out.String(), "ERROR") {
		t.Errorf("no ERROR in\n%s", out.Bytes())
	}
}

// TestVerdictLimit: the limit is 64 B a member + 128 MiB at the largest
// size, inclusive.
func TestVerdictLimit(t *testing.T) {
	const n = 3_000_000
	limit := int64(64*n + 128<<20)
	for _, tc := range []struct {
		rss  int64
		pass bool
	}{{limit, true}, {limit + 1, false}, {1 << 20, true}} {
		rows := []*row{{name: "c", rss: []int64{1 << 20, tc.rss}, wall: []float64{1, 1}, errs: []string{"", ""}}}
		var out bytes.Buffer
		if got := printTable(&out, []int{375_000, n}, rows); got != tc.pass {
			t.Errorf("RSS %d: pass %v, want %v\n%s", tc.rss, got, tc.pass, out.Bytes())
		}
	}
}

func TestParseSizes(t *testing.T) {
	got, err := parseSizes("3000000, 375000,375000")
	if err != nil || len(got) != 2 || got[0] != 375000 || got[1] != 3000000 {
		t.Errorf("parseSizes: %v, %v; want [375000 3000000]", got, err)
	}
	for _, bad := range []string{"", "x", "15", "1001", "-4"} {
		if _, err := parseSizes(bad); err == nil {
			t.Errorf("parseSizes(%q) accepted", bad)
		}
	}
	if got := sizeLabel(375000) + " " + sizeLabel(3000000) + " " + sizeLabel(1500000) + " " + sizeLabel(999); got != "375k 3M 1.5M 999" {
		t.Errorf("size labels %q", got)
	}
}
