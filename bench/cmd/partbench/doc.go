// Command partbench measures partitioned runs: a command run as tasks
// (`--task K/N`, each writing its part beside the output) and then
// `itarconv merge`, against the same command run once, and checks that the
// merge writes exactly what the one run writes.
//
//	go run ./bench/cmd/partbench [-dir DIR] [-reps N] [-quick] [-only index,all,tbl,barecat,fold] [-many N] [-many-tasks N] [-many-jobs index,all,tbl] [-quiet-wait D]
//
// About 7 minutes on this project's 2-core machine; -quick is a smoke run
// of a few seconds (A scaled to 2,000 members, 500 small shards, one rep).
//
// On dataset A (100k members of 1-20 KiB in 8 shards, bench.DatasetA), each
// job runs once with --workers 2, and as 4 tasks with --workers 1, two
// processes at a time (the next starts when one ends), followed by
// `itarconv merge --workers 2`:
//
//   - index: `index -o OUT.taridx SHARDS...`
//   - all: `index --format all -o OUT.taridx SHARDS...` (every loader's
//     index; the per-shard ones are written beside the shards, by the one
//     run and by the tasks alike, and taken away between runs)
//   - tbl: `convert SHARDS... OUT.tbl`
//   - barecat: `convert SHARDS... OUT.barecat` (the default shard size)
//   - fold: `convert IN.tbl OUTDIR` (a TBL file made from A once, untimed)
//
// Then the merge at scale: a set of -many (10,000) small shards, 10 members
// of 100-500 bytes each, indexed (TARIDX, and --format all) and converted
// into TBL once and as 10 tasks (-many-tasks), two at a time; what it is
// for is the merge's time, and its cost per shard. -many-tasks 1000 is the
// merge of 1,000 parts of 10,000 shards (target: under 2 s for the index). The
// index's tasks run on the first rep only (TBL's too, with 100 tasks or
// more: a copy of TBL's parts has its samples merged by copying, not in
// place): later reps merge again from a copy of their parts (and the
// loaders' files they wrote beside the shards, linked back), so that the
// merge and the one run are medians over -reps and the tasks one run.
//
// Reported per job: the one run's time; the tasks' (the wall time of the
// whole schedule); the merge's; their sum; the sum and the merge as ratios
// of the one run (targets: the sum at most 1.2x the one run, the merge
// at most 5% of it, 15% for TBL), the bytes the merge copied (from `itarconv merge
// --json`), the size of the output, CPU seconds and peak RSS. Times are
// medians (min-max) over -reps. Every merged output is compared with the
// one run's, byte for byte: the files of an index (and every loader's
// file), the .tbl file; for Barecat, its shards and `itarconv ls` (its
// SQLite file may differ); for a tar fold, whose shards may end elsewhere,
// its members (headers and payloads, in order) and its index's rows but
// for their fids and offsets, and `itarconv verify --data` passes.
//
// All runs are subprocesses timed by this program (wall clock, process
// start included), in the same invocation, on the same files, with the
// page cache warm, so only the ratios within one run compare; absolute
// figures from different runs or machines do not. Before each timed step
// the file system is synced, so that none pays for another's writeback,
// and the step's inputs are read once more, untimed: on a virtual machine,
// cached pages left alone for some seconds can be slow to reach again,
// which would tax whichever step follows a pause. Outputs are removed
// between runs, untimed. Peak RSS is the child's ru_maxrss, taken after
// this program has lowered its own peak (/proc/self/clear_refs), which
// Linux would otherwise count in every child's. The datasets are kept in
// -dir (default: partbench under the system's temporary directory) and
// reused by later runs; what a run writes beside them is removed.
//
// The exit status is non-zero only when something breaks (a command fails,
// or a merged output differs from the one run's). A missed target is a
// measurement: it prints FAIL and still exits 0.
//
// It is for development benchmarks only: no product package imports it.
package main
