// Package convert converts a dataset from any format into any other, in
// one call (Convert), through the row model: the source's rows go to the
// target's sink. The pairs that need more than rows have converters of
// their own here: tar shards to TBL (TurboLoader's selection), to Barecat
// (duplicate policies, hard links, --wrap, kernel copies) and to SCDL (its
// two folds), SCDL to tar, a wrapped Barecat back to an index over its tars;
// and the halves of partitioned conversions (ConvertPart, MergeConverted).
//
// It joins formats: it imports formats, the row model and the floor, never
// the command line, a test helper or a benchmark.
package convert
