// Command convbench measures `itarconv convert` between tar shards and
// Barecat, and between tar shards and TBL (TurboLoader's format), against
// the cost of copying the same bytes once with cat, and checks the
// project's conversion targets.
//
//	go run ./bench/cmd/convbench [-dir DIR] [-reps N] [-quick] [-only barecat,tbl,pairs]
//
// Every tool runs in the same invocation, on the same files, with the page
// cache warm, so the comparison holds on whatever machine it runs on;
// absolute figures from different runs or machines are not comparable.
// Each run is a subprocess timed by this program (wall clock, process start
// included); its CPU time and peak RSS come from its rusage.
//
// The baseline of each direction is `cat SHARDS > FILE && sync FILE`: the
// time to copy the input's bytes once and make them durable, which a
// conversion that copies data cannot beat (itarconv fsyncs what it writes
// too). The conversions from tar (to Barecat and to TBL) share one baseline,
// the cat of the tar shards; each reverse direction has the cat of its own
// source (the Barecat shards, the .tbl file), which is made once, untimed.
// Outputs are removed between runs, untimed, and the file system is synced
// after the removal so that no run pays for the previous one's writeback.
//
// For TBL, the peak RSS of each conversion is also taken, untimed, on the
// dataset scaled down to an eighth (as many shards, so the same number of
// workers) and compared with the full run's: it must not grow with the data.
//
// The exit status is non-zero only when something breaks (a tool fails, or
// an output does not hold one file, sample or row per generated member). A
// missed target is a measurement: it prints FAIL and still exits 0.
//
// It is for development benchmarks only: no product package imports it.
package main
