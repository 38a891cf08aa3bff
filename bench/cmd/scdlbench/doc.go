// Command scdlbench measures `itarconv convert` between an SCDL archive and
// tar shards against the cost of copying the same bytes once with cat, and
// checks the project's SCDL targets:
//
//   - per-cell export (SCDL -> fold cells + scdlmeta) of a synthetic archive
//     of 1M cells, about 100 non-zero values each: at least 200k cells/s;
//
//   - archive mode (SCDL -> fold scdl) and back (fold scdl -> SCDL): within
//     2x of `cat FILES > f && sync f` of the same bytes;
//
//   - memory independent of the number of cells: the per-cell export's peak
//     RSS on an archive of a tenth of the cells is compared;
//
//   - SCDL <-> Barecat and SCDL <-> TBL directly: no slower than the two
//     steps through a tar fold that each replaces.
//
//     go run ./bench/cmd/scdlbench [-dir DIR] [-cells N] [-reps N] [-quick]
//
// Every tool runs in the same invocation, on the same files, with the page
// cache warm. Each run is a subprocess timed by this program (wall clock,
// process start included); its peak RSS comes from its rusage. Outputs are
// removed between runs, untimed, and the file system synced. A missed target
// prints FAIL and still exits 0; a failing tool or a wrong output exits 1.
//
// It is for development benchmarks only: no product package imports it.
package main
