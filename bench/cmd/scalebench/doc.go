// Command scalebench shows how itarconv scales with workers: each job's
// wall time at --workers 1, 2, 4, ... up to the cores, beside a baseline
// of the system's own tools run in the same invocation, as many at a time
// as the workers, and the part of each job that does not run in parallel,
// per member.
//
//	go run ./bench/cmd/scalebench [-workers 1,2] [-members N] [-kib-members N] [-reps N] [-quick] [-quiet-wait D]
//
// About 3 minutes on this project's 2-core machine; -quick is a smoke run
// of a few seconds (100k tiny members, 5k of 1-20 KiB, one rep).
//
// The datasets are generated, deterministically (formatcompare/shardgen),
// into a temporary directory, removed on exit and on Ctrl-C: -members
// one-byte members (default 3M, the 2-core dataset) in max(8, 2*workers) shards; -kib-members
// members of 1-20 KiB (default 100k); and a fifth of -members one-byte
// members, gzip-compressed. The jobs, and their baselines:
//
//   - index (TARIDX), index --format all, merge of 8 index parts (the
//     tasks, `index --task K/8`, run untimed before each merge), verify
//     --data: against `tar -tf` of the tiny shards, as many at a time as
//     the workers;
//   - tar -> TBL (tiny members), tar -> Barecat (1-20 KiB members): against
//     `cat` of the input into a file and `sync` of it, the shards dealt to
//     as many processes as the workers;
//   - gzip shards -> TBL: against `gzip -dc`, as many at a time.
//
// The itarconv binary is built once, statically (CGO_ENABLED=0), and run as
// a child process with as many cores as workers (GOMAXPROCS=n: at
// --workers 1 the preparing goroutines and the collector would take the
// other cores, and the 1-worker time would not be one core's, which
// Amdahl's law below needs); times are its wall time, process start included,
// medians of -reps, after a warm-up run of every command and baseline (the
// page cache warm), the file system synced before each, outputs removed
// between runs, untimed. The reps interleave every job at every worker
// count, so that a slow phase of a shared machine hits them alike.
//
// The row "serial part per member" is Amdahl's law fitted to the medians
// at 1 and n workers: s = (T_n/T_1 - 1/n)/(1 - 1/n), clamped to [0, 1], and
// s*T_1/members is the time per member that did not run in parallel. It is
// what lets a 2-core machine judge whether a job will scale to 16 or 128.
//
// The lines "bytes written" say what each index run wrote (its outputs and
// the loaders' files beside the shards), measured after the warm-up run:
// what an index for every loader weighs against a TARIDX alone.
//
// The targets print as PASS/FAIL lines where they apply (the
// 16-core ones when 16 is among the worker counts); a missed
// target is a measurement and still exits 0. Only the ratios within one run
// compare.
//
// It is for development benchmarks only: no product package imports it.
package main
