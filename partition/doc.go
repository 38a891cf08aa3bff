// Package partition divides a run among tasks that run apart, on one
// machine or many (a Slurm job array, a Kubernetes Indexed Job, GNU
// parallel): which task this process is, and which shards it takes.
//
// A task's share is a contiguous range of the shard order, balanced by
// bytes, and decided by the shards' sizes alone, so that every task, run
// anywhere, computes the same ranges.
//
// It imports no command line, no test helper and no benchmark.
package partition
