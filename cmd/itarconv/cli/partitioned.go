package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/itarconv/itarconv/partition"
)

// taskFlags are the flags of a command that runs as one task of many.
type taskFlags struct {
	task  string
	tasks int
}

func (tf *taskFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&tf.task, "task", "", "run as task K of N (K from 0) of a partitioned run: its share of the shards, into a part that 'itarconv merge' joins (default: from SLURM_ARRAY_TASK_ID, or JOB_COMPLETION_INDEX with --tasks)")
	f.IntVar(&tf.tasks, "tasks", 0, "the number of tasks, for a Kubernetes Indexed Job (JOB_COMPLETION_INDEX gives the task)")
}

// resolve says which task this process is, or ok false for a whole run:
// --task, else the job runner's variables.
func (tf *taskFlags) resolve(getenv func(string) string) (t partition.Task, ok bool, err error) {
	if tf.task != "" {
		if tf.tasks != 0 {
			return t, false, usagef("--tasks is for JOB_COMPLETION_INDEX; --task K/N already gives N")
		}
		t, err = partition.Parse(tf.task)
		if err != nil {
			return t, false, usageError{err}
		}
		return t, true, nil
	}
	t, ok, err = partition.FromEnv(getenv, tf.tasks)
	if err != nil {
		return t, false, usageError{err}
	}
	if !ok && tf.tasks != 0 {
		return t, false, usagef("--tasks %d: no JOB_COMPLETION_INDEX in the environment says which task this is (give --task K/N)", tf.tasks)
	}
	return t, ok, nil
}

// expandTaskArgs is expandShardArgsInfo of a conversion's sources, which
// a task takes from the run's first task where it can
// (resolveTaskShards).
func expandTaskArgs(ctx context.Context, e *env, tf taskFlags, args []string, out string) ([]string, []fs.FileInfo, error) {
	return resolveTaskShards(ctx, e, tf, args, out, func() ([]string, []fs.FileInfo, error) { return expandShardArgsInfo(ctx, args) })
}

// resolveTaskShards is resolve, but for a task of a partitioned run whose
// output is out: there the first task to resolve @LIST arguments leaves
// what it found for the others (partition.ResolveShared), which then stat
// only their own shards. A task flag that is wrong is left for the
// command's own checks to report, in their order.
func resolveTaskShards(ctx context.Context, e *env, tf taskFlags, args []string, out string, resolve func() ([]string, []fs.FileInfo, error)) ([]string, []fs.FileInfo, error) {
	t, ok, err := tf.resolve(e.getenv)
	if err != nil || !ok || out == "" || out == "-" {
		return resolve()
	}
	return partition.ResolveShared(ctx, args, out, t, resolve)
}

// runTask writes this task's part of the run whose output is out over
// the inputs in: fill writes the partial outputs into the part's directory and
// returns the task's figures. It reports where the part went.
func (e *env) runTask(command, out string, t partition.Task, in []partition.Input, options any,
	fill func(dir string, m *partition.Manifest) (stats any, lo, hi int, err error)) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	opts, err := json.Marshal(options)
	if err != nil {
		return err
	}
	m := &partition.Manifest{Command: command, Output: abs, Task: t.K, Tasks: t.N, TaskSource: t.Source,
		Options: opts, Inputs: in}
	dir, err := partition.WritePart(abs, m, func(dir string) error {
		st, lo, hi, err := fill(dir, m)
		if err != nil {
			return err
		}
		m.Shards = [2]int{lo, hi}
		m.Stats, err = json.Marshal(st)
		return err
	})
	if err != nil {
		return fmt.Errorf("task %d of %d: %w", t.K, t.N, err)
	}
	e.infof("task %d of %d (%s) of run %s: %s -> %s; run 'itarconv merge %s' once every task is done\n",
		t.K, t.N, t.Source, partition.ShortID(m.Run), partition.ShardRange(m.Shards[0], m.Shards[1]), dir, shellQuote(out))
	return e.setResult(taskResult{Task: t.K, Tasks: t.N, TaskSource: t.Source, Run: m.Run, Output: abs, Part: dir,
		Shards: m.Shards, Stats: m.Stats})
}

// taskResult is what a task of a partitioned run reports with --json.
type taskResult struct {
	Task       int    `json:"task"`
	Tasks      int    `json:"tasks"`
	TaskSource string `json:"task_source"` // where the task's number came from
	Run        string `json:"run"`         // the run's digest, as merge --run takes it
	Output     string `json:"output"`      // the run's output, absolute
	Part       string `json:"part"`        // the directory of this task's part
	// Shards is the task's range [first, end) of the run's shards.
	Shards [2]int          `json:"shards"`
	Stats  json.RawMessage `json:"stats"` // the task's figures, as its part records them
}

// missingResult is merge --missing's result: the tasks still to run.
type missingResult struct {
	Missing []int `json:"missing"`
}

type mergeFlags struct {
	run     string
	missing bool
	json    bool
	workers int
}

func newMergeCmd(e *env) *cobra.Command {
	var fl mergeFlags
	cmd := &cobra.Command{
		Use:   "merge OUTPUT",
		Short: "Join the parts of a partitioned run into the outputs of one run",
		Long: `Merge joins the parts that the tasks of a partitioned run (index or convert
with --task K/N, or run as a Slurm array or a Kubernetes Indexed Job) wrote
beside OUTPUT, the output path every task was given, into exactly the files
one run of the same command would have written.

It first checks that every task's part is there, complete, and from the same
inputs (names, sizes, modification times), options and itarconv version; a
task whose part is missing or stale is named, to be run again. Once the
outputs are in place the parts are removed; merging again does nothing.

Each part names its run by a digest of what the run is (its inputs as the
task saw them, the options that shape its outputs, the number of tasks, the
itarconv version), the same on every machine; no clock is compared. When
the parts are of several runs, merge takes the one whose inputs are as they
are now, or, among runs that differ only in their number of tasks, a
complete one; otherwise it names each run (its digest, its tasks, what
differs) and merges nothing: --run RUN (a digest, or its beginning) says
which. Parts of other runs are removed after the merge.

--missing prints the tasks still to run (again), one per line, and nothing
once every part is there: a job runner resubmits those.`,
		Args: argsBetween(1, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.json = e.jsonOut
			return runMerge(cmd.Context(), e, fl, args[0])
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.run, "run", "", "merge the run whose digest begins so, when the parts are of several runs")
	f.BoolVar(&fl.missing, "missing", false, "print the tasks still to run, one per line, and merge nothing")
	f.IntVar(&fl.workers, "workers", defaultWorkers(), "parts read in parallel, where a format can")
	return cmd
}

func runMerge(ctx context.Context, e *env, fl mergeFlags, out string) error {
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	set, err := partition.FindRun(abs, true, fl.run)
	if err != nil {
		return err
	}
	if fl.missing {
		// Parts of several runs: which tasks to run depends on the run.
		if err := set.Which(); err != nil {
			return err
		}
		if fl.json {
			return e.setResult(missingResult{Missing: append([]int{}, set.Missing()...)})
		}
		for _, k := range set.Missing() {
			fmt.Fprintln(e.stdout, strconv.Itoa(k))
		}
		return nil
	}
	if set.Merged != nil {
		if err := set.Merged.StillMerged(); err != nil {
			return fmt.Errorf("%s was merged, but its outputs changed since (%w): run the tasks again, then merge", out, err)
		}
		e.infof("%s: already merged from %d tasks; nothing to do\n", out, set.Merged.Tasks)
		if fl.json {
			return e.setResult(map[string]any{"output": out, "merged": "already", "tasks": set.Merged.Tasks})
		}
		return nil
	}
	if err := set.Complete(); err != nil {
		return err
	}
	for _, o := range set.Other {
		e.warnf("%s: a part of another run (%s); removed after the merge\n", o, set.OtherWhy[o])
	}
	m := set.Parts[0].Manifest
	var outputs []string
	var undo func()
	switch m.Command {
	case "index":
		outputs, err = mergeIndex(ctx, e, fl, set)
	case "convert":
		outputs, undo, err = mergeConvert(ctx, e, fl, set)
	default:
		err = fmt.Errorf("%s: parts of an unknown command %q (a newer itarconv?): %w", set.Dir, m.Command, partition.ErrParts)
	}
	if err != nil {
		return err
	}
	if afterMergeHook != nil {
		afterMergeHook()
	}
	err = set.Done(existing(outputs))
	if errors.Is(err, partition.ErrRunning) && undo != nil {
		// A task ran again during the merge: what was merged is not the
		// run's; the next merge writes it.
		undo()
	}
	return err
}

// afterMergeHook, when set (by tests), runs between writing a merge's
// outputs and recording it.
var afterMergeHook func()

// existing keeps the paths that are there.
func existing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		} else if !errors.Is(err, os.ErrNotExist) {
			out = append(out, p) // Done reports it
		}
	}
	return out
}
