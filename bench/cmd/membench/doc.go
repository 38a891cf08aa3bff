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
// The commands include `index --format all` (the loaders' files it writes
// beside the shards are removed after it) and `merge` of the parts of a
// partitioned index run of 4 tasks (run first, untimed).
//
// The table has a row per command: its peak RSS at each size, its wall time
// at each size, (RSS - 128 MiB) / N at the largest size, the limit
// 64 N + 128 MiB and the verdict, and, with several sizes, what each
// further member costs and the ratio of the peaks at the largest and
// smallest sizes (memory flat in members: at most 1.25x from 1M to 10M). The exit status is 0 when every command
// succeeded and passed, 1 when one failed or missed the target, 2 on bad
// flags.
//
// It is for development benchmarks only: no product package imports it.
package main
