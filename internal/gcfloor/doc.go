// Package gcfloor keeps the garbage collector's heap goal at least a
// floor (the command's: 32 MiB, for index, convert and merge). A pass
// over thousands of small shards
// keeps a few megabytes live and allocates steadily, and with the
// default goal (twice the live heap) it collected every few
// milliseconds: a tenth of a task's CPU time, and of one run's. Past the
// floor the goal is GOGC's, so the memory of a large run is what it was
// (flat in the number of members); a user's GOGC, or GOMEMLIMIT, stands.
package gcfloor
