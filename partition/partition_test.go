package partition

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
)

func TestParse(t *testing.T) {
	for s, want := range map[string]string{"0/1": "0/1", " 2/7 ": "2/7", "6/7": "6/7"} {
		got, err := Parse(s)
		if err != nil || got.String() != want || got.Source != "--task" {
			t.Errorf("Parse(%q) = %v, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "3", "7/7", "-1/3", "1/0", "a/b", "1/2/3", "0/1048577"} {
		if _, err := Parse(s); !errors.Is(err, ErrTask) {
			t.Errorf("Parse(%q): %v, want ErrTask", s, err)
		}
	}
}

func TestFromEnv(t *testing.T) {
	tests := []struct {
		env    map[string]string
		tasks  int
		want   string // "" for none found
		source string
		bad    bool
	}{
		{env: map[string]string{}},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "4"}, want: "3/4", source: "SLURM_ARRAY_TASK_ID and SLURM_ARRAY_TASK_COUNT"},
		// --array=1-4: ids from 1.
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "1", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4"}, want: "0/4", source: "SLURM_ARRAY_TASK_ID, _MIN and _MAX"},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "4", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "4", "SLURM_ARRAY_TASK_COUNT": "4"}, want: "3/4"},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "2", "SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "6", "SLURM_ARRAY_TASK_STEP": "2"}, bad: true},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "2"}, bad: true},
		{env: map[string]string{"SLURM_ARRAY_TASK_ID": "5", "SLURM_ARRAY_TASK_COUNT": "4"}, bad: true},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, tasks: 3, want: "2/3", source: "JOB_COMPLETION_INDEX and --tasks"},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "2"}, bad: true},
		{env: map[string]string{"JOB_COMPLETION_INDEX": "3"}, tasks: 3, bad: true},
	}
	for i, tt := range tests {
		got, ok, err := FromEnv(func(k string) string { return tt.env[k] }, tt.tasks)
		switch {
		case tt.bad:
			if !ok || !errors.Is(err, ErrTask) {
				t.Errorf("%d: %v, %v, %v: want ErrTask", i, got, ok, err)
			}
		case tt.want == "":
			if ok || err != nil {
				t.Errorf("%d: %v, %v, %v: want none", i, got, ok, err)
			}
		default:
			if !ok || err != nil || got.String() != tt.want || (tt.source != "" && got.Source != tt.source) {
				t.Errorf("%d: %v (%s), %v, %v: want %s (%s)", i, got, got.Source, ok, err, tt.want, tt.source)
			}
		}
	}
}

// ranges is every task's range, as each task computes its own.
func ranges(sizes []int64, n int) [][2]int {
	var out [][2]int
	for k := range n {
		lo, hi := Range(sizes, Task{K: k, N: n})
		out = append(out, [2]int{lo, hi})
	}
	return out
}

func TestRange(t *testing.T) {
	tests := []struct {
		sizes []int64
		n     int
		want  [][2]int
	}{
		{[]int64{10, 10, 10, 10}, 2, [][2]int{{0, 2}, {2, 4}}},
		{[]int64{10, 10, 10, 10}, 1, [][2]int{{0, 4}}},
		// A big shard is a task's share alone.
		{[]int64{100, 1, 1, 1, 1}, 2, [][2]int{{0, 1}, {1, 5}}},
		// More tasks than shards: some get none.
		{[]int64{5, 5}, 3, [][2]int{{0, 1}, {1, 1}, {1, 2}}},
		{[]int64{5, 5, 5}, 7, [][2]int{{0, 0}, {0, 1}, {1, 1}, {1, 2}, {2, 2}, {2, 3}, {3, 3}}},
		// No bytes: by count.
		{[]int64{0, 0, 0, 0}, 2, [][2]int{{0, 2}, {2, 4}}},
		{nil, 3, [][2]int{{0, 0}, {0, 0}, {0, 0}}},
		// Sizes whose sum times n passes 64 bits.
		{[]int64{math.MaxInt64 / 4, math.MaxInt64 / 4, math.MaxInt64 / 4, math.MaxInt64 / 4}, 4, [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 4}}},
	}
	for _, tt := range tests {
		if got := ranges(tt.sizes, tt.n); !slices.Equal(got, tt.want) {
			t.Errorf("Range(%v, n=%d) = %v, want %v", tt.sizes, tt.n, got, tt.want)
		}
	}
}

// TestRangeCovers: for many sizes and task counts, the ranges cover every
// shard once, in order, and no task has much more than its share.
func TestRangeCovers(t *testing.T) {
	for seed := range 200 {
		n := 1 + seed%9
		sizes := make([]int64, seed%37)
		var total int64
		var biggest int64
		for i := range sizes {
			sizes[i] = int64((seed*7919 + i*104729) % 1000)
			total += sizes[i]
			biggest = max(biggest, sizes[i])
		}
		next := 0
		for k, r := range ranges(sizes, n) {
			if r[0] != next || r[1] < r[0] {
				t.Fatalf("sizes %v, %d tasks: task %d has %v after %d", sizes, n, k, r, next)
			}
			next = r[1]
			var got int64
			for _, s := range sizes[r[0]:r[1]] {
				got += s
			}
			if total > 0 && got > total/int64(n)+biggest {
				t.Errorf("sizes %v, %d tasks: task %d has %d bytes of %d", sizes, n, k, got, total)
			}
		}
		if next != len(sizes) {
			t.Fatalf("sizes %v, %d tasks: the ranges end at %d", sizes, n, next)
		}
	}
}

func ExampleRange() {
	sizes := []int64{300, 100, 100, 100, 300, 100}
	for k := range 3 {
		lo, hi := Range(sizes, Task{K: k, N: 3})
		fmt.Println(k, sizes[lo:hi])
	}
	// Output:
	// 0 [300]
	// 1 [100 100 100]
	// 2 [300 100]
}

func TestShardRange(t *testing.T) {
	for _, c := range []struct {
		lo, hi int
		want   string
	}{{1, 1, "no shards"}, {0, 1, "shard 0"}, {3, 6, "shards 3 to 5"}} {
		if got := ShardRange(c.lo, c.hi); got != c.want {
			t.Errorf("ShardRange(%d, %d) = %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}
