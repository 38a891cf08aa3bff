// Command indexbench measures `itarconv index` against GNU `tar -tf` on
// generated WebDataset-style shards and checks the project's speed and
// memory targets.
//
//	go run ./bench/cmd/indexbench [-dir DIR] [-reps N] [-quick]
//
// Both tools run in the same invocation, on the same files, with the page
// cache warm, so the comparison holds on whatever machine it runs on;
// absolute figures from different runs or machines are not comparable.
// Each tool is run as a subprocess and timed by this program (wall clock,
// process start included); its CPU time and peak RSS come from its rusage.
// A third, in-process row walks the tar headers and does nothing else: the
// floor that any indexer reading headers pays on this machine.
//
// The exit status is non-zero only when something breaks (a tool fails, or
// the index does not hold one row per generated member). A missed target is
// a measurement: it prints FAIL and still exits 0.
//
// It is for development benchmarks only: no product package imports it.
package main
