package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/formatcompare"
)

// runBenchCmd runs "itarconv bench ARGS" through a root made here (the
// command is registered in root.go separately).
func runBenchCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	e := &env{stdout: &stdout, stderr: &stderr, quiet: true}
	root := &cobra.Command{Use: "itarconv", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newBenchCmd(e))
	root.SetArgs(append([]string{"bench"}, args...))
	root.SetOut(&stdout)
	root.SetErr(&stderr)
	err := root.Execute()
	return stdout.String(), err
}

func TestBenchCommand(t *testing.T) {
	out := t.TempDir()
	common := []string{"--synthetic", "200", "--min-size", "64", "--max-size", "2KiB", "--shards", "2", "--reads", "100", "--reps", "1", "--no-cold"}
	stdout, err := runBenchCmd(t, append(common, "--out", out)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"format", "tar + TARIDX", "Barecat (--wrap)", "TBL v2 + LZ4", "check µs", "seq MB/s", "200 samples"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}
	var rep struct {
		Command string `json:"command"`
		Formats []struct {
			Name string `json:"name"`
		} `json:"formats"`
	}
	b, err := os.ReadFile(filepath.Join(out, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Formats) != len(formatcompare.DefaultFormats()) || !strings.HasPrefix(rep.Command, "itarconv bench --synthetic 200 --min-size 64") {
		t.Errorf("report: %d formats, command %q", len(rep.Formats), rep.Command)
	}
	// The conversions were removed: only the report is left.
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "build.svg latency.svg report.json report.md sequential.svg size.svg" {
		t.Errorf("--out holds %v", names)
	}

	// Wrong bytes from one format: an error naming it (exit 1 through Main).
	_, err = runBenchCmd(t, append(common, "--formats", "tar+taridx,tbl-v1", "--corrupt", "tbl-v1")...)
	var ue usageError
	if err == nil || errors.As(err, &ue) || !strings.Contains(err.Error(), "tbl-v1: wrong bytes") {
		t.Errorf("corrupted run: %v", err)
	}
}

func TestBenchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "give SRC"},
		{[]string{"--synthetic", "10", "somedir"}, "not both"},
		{[]string{"--synthetic", "10", "--formats", "zip"}, `unknown format "zip"`},
		{[]string{"--synthetic", "10", "--min-size", "2KiB", "--max-size", "1KiB"}, "--max-size must be at least"},
		{[]string{"--synthetic", "10", "--reps", "0"}, "at least 1"},
	} {
		_, err := runBenchCmd(t, tc.args...)
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("bench %v: %v, want a usage error with %q", tc.args, err, tc.want)
		}
	}
}

// The command's defaults are the engine's: a bounded run (see
// formatcompare.TestDefaultPlanBounded).
func TestBenchDefaultsBounded(t *testing.T) {
	cmd := newBenchCmd(&env{})
	if err := cmd.ParseFlags([]string{"--synthetic", "3000"}); err != nil {
		t.Fatal(err)
	}
	var fl benchFlags
	get := func(name string) int {
		v, err := cmd.Flags().GetInt(name)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	fl.reads, fl.coldReads, fl.reps, fl.workers, fl.synthetic, fl.shards = get("reads"), get("cold-reads"), get("reps"), get("workers"), get("synthetic"), get("shards")
	fl.formats, _ = cmd.Flags().GetString("formats")
	fl.minSize, _ = cmd.Flags().GetString("min-size")
	fl.maxSize, _ = cmd.Flags().GetString("max-size")
	opts, err := benchOptions(fl, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := opts.Plan(), (formatcompare.Options{}).Plan(); got != want || got.RandomReads > 8_400*len(opts.Formats) || got.ColdReads > 700*len(opts.Formats) {
		t.Errorf("default plan %+v, the engine's %+v", got, want)
	}
}
