package partition

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// ErrTask: a task given, or found in the environment, that is no task of
// a run (K outside 0..N-1, N < 1, text that is no number).
var ErrTask = errors.New("not a task of a partitioned run")

// MaxTasks is the most tasks a run may have: a merge keeps a slot for
// each, so a number of tasks read from a part's name or manifest must not
// size memory unchecked. (A Slurm array or a Kubernetes Indexed Job has
// far fewer.)
const MaxTasks = 1 << 20

// Task is task K of N, K from 0.
type Task struct {
	K, N int
	// Source says where the task came from: "--task", or the environment
	// variables read.
	Source string
	// Run is the run's ID (RunID) where the caller knows it: the tasks of
	// a run may leave each other what they computed under it (files named
	// SharedPrefix and more in the parts directory). "" where unknown.
	Run string
}

func (t Task) String() string { return fmt.Sprintf("%d/%d", t.K, t.N) }

// Parse reads "K/N".
func Parse(s string) (Task, error) {
	ks, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Task{}, fmt.Errorf("%w: %q: want K/N, task K of N counted from 0", ErrTask, s)
	}
	return newTask(ks, ns, "--task")
}

func newTask(ks, ns, source string) (Task, error) {
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	switch {
	case err1 != nil || err2 != nil:
		return Task{}, fmt.Errorf("%w: %s: %q of %q: not numbers", ErrTask, source, ks, ns)
	case n < 1:
		return Task{}, fmt.Errorf("%w: %s: %d tasks", ErrTask, source, n)
	case n > MaxTasks:
		return Task{}, fmt.Errorf("%w: %s: %d tasks, more than %d", ErrTask, source, n, MaxTasks)
	case k < 0 || k >= n:
		return Task{}, fmt.Errorf("%w: %s: task %d of %d (tasks count from 0)", ErrTask, source, k, n)
	}
	return Task{K: k, N: n, Source: source}, nil
}

// FromEnv finds the task in the variables job runners set, read through
// getenv (os.Getenv): a Slurm job array's SLURM_ARRAY_TASK_ID, with
// SLURM_ARRAY_TASK_COUNT or the array's SLURM_ARRAY_TASK_MIN and _MAX
// (its step must be 1), or a Kubernetes Indexed Job's JOB_COMPLETION_INDEX,
// whose number of tasks the job does not tell its pods: tasks gives it
// (0 when not given). ok is false when none is set.
func FromEnv(getenv func(string) string, tasks int) (t Task, ok bool, err error) {
	if id := getenv("SLURM_ARRAY_TASK_ID"); id != "" {
		t, err := slurm(getenv, id)
		return t, true, err
	}
	if idx := getenv("JOB_COMPLETION_INDEX"); idx != "" {
		if tasks < 1 {
			return Task{}, true, fmt.Errorf("%w: JOB_COMPLETION_INDEX=%s: give the number of tasks (the job's completions) with --tasks", ErrTask, idx)
		}
		t, err := newTask(idx, strconv.Itoa(tasks), "JOB_COMPLETION_INDEX and --tasks")
		return t, true, err
	}
	return Task{}, false, nil
}

// slurm reads a Slurm array task: its id counted from the array's first.
func slurm(getenv func(string) string, id string) (Task, error) {
	min, max := getenv("SLURM_ARRAY_TASK_MIN"), getenv("SLURM_ARRAY_TASK_MAX")
	if step := getenv("SLURM_ARRAY_TASK_STEP"); step != "" && step != "1" {
		return Task{}, fmt.Errorf("%w: a Slurm array with step %s: submit --array=0-N with step 1", ErrTask, step)
	}
	if min == "" {
		min = "0"
	}
	i, err1 := strconv.Atoi(id)
	lo, err2 := strconv.Atoi(min)
	if err1 != nil || err2 != nil {
		return Task{}, fmt.Errorf("%w: SLURM_ARRAY_TASK_ID=%q, SLURM_ARRAY_TASK_MIN=%q: not numbers", ErrTask, id, min)
	}
	if count := getenv("SLURM_ARRAY_TASK_COUNT"); count != "" {
		return newTask(strconv.Itoa(i-lo), count, "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT")
	}
	hi, err := strconv.Atoi(max)
	if err != nil {
		return Task{}, fmt.Errorf("%w: SLURM_ARRAY_TASK_ID=%s without SLURM_ARRAY_TASK_COUNT or SLURM_ARRAY_TASK_MAX", ErrTask, id)
	}
	return newTask(strconv.Itoa(i-lo), strconv.Itoa(hi-lo+1), "SLURM_ARRAY_TASK_ID, _MIN and _MAX")
}

// Range is the share of task t among shards of the given sizes, in their
// order: shards[lo:hi], possibly empty (more tasks than shards). A shard
// goes to the task whose part of the bytes holds the shard's middle, so
// the ranges are contiguous, cover every shard once, and give each task
// about total/N bytes; with no bytes at all, about len/N shards each.
func Range(sizes []int64, t Task) (lo, hi int) {
	owners := Owners(sizes, t.N)
	lo = len(sizes)
	for i, k := range owners {
		if k >= t.K {
			lo = i
			break
		}
	}
	hi = lo
	for hi < len(owners) && owners[hi] == t.K {
		hi++
	}
	return lo, hi
}

// Owners is the task of every shard, for a run of n tasks: non-decreasing,
// so that each task's shards are one range (Range).
func Owners(sizes []int64, n int) []int {
	out := make([]int, len(sizes))
	var total uint64
	for _, s := range sizes {
		total += uint64(max(s, 0))
	}
	var before uint64
	for i, s := range sizes {
		size := uint64(max(s, 0))
		if total == 0 {
			out[i] = i * n / len(sizes)
			continue
		}
		// floor(mid*n/total), mid the offset of the shard's middle
		// among all the bytes, in halves of a byte to stay in integers,
		// and in 128 bits so that no size overflows.
		hi, lo := bits.Mul64(2*before+size, uint64(n))
		q, _ := bits.Div64(hi, lo, 2*total)
		out[i] = min(int(q), n-1)
		before += size
	}
	return out
}

// ShardRange names the shards [lo, hi) of a task as people count them:
// "no shards", "shard 3", "shards 3 to 5" (both ends included).
func ShardRange(lo, hi int) string {
	switch {
	case hi <= lo:
		return "no shards"
	case hi == lo+1:
		return fmt.Sprintf("shard %d", lo)
	}
	return fmt.Sprintf("shards %d to %d", lo, hi-1)
}
