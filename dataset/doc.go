// Package dataset is the row model every format is read into, or written
// from: a dataset is a sequence of shards, a shard a sequence of Rows (one
// file, member or sample each). A Source lists the rows of each shard; a
// Sink consumes them. Run scans shards on parallel workers and delivers
// their rows to the sink in dataset order, so the output is the same
// whatever the number of workers. The package knows no format: each
// format's sources and sinks, and the conversions (package convert), are
// built on it.
//
// It knows no format: it imports only internal/ packages.
package dataset
