// Package sharedrec keeps the small records the tasks of a partitioned
// run leave each other in the directory they share, so that a task need
// not compute again what another of the run computed (how many samples,
// bytes or values a range of the dataset's shards holds).
//
// A record is a file written whole under a temporary name, then renamed,
// and sealed by a CRC-32C of its name and content: a reader gets a record
// whole or nothing. Records only save work: one that cannot be written or
// read is computed again, and the writers that use them check what they
// place against what the merge finds.
package sharedrec
