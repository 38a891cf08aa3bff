// Package atonce does the work of each item of a list several items at a
// time: the stats and opens of thousands of shards, each a round trip on a
// network file system, which in turn would take minutes before a run
// starts.
package atonce
