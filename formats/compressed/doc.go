// Package compressed recognises compressed tar shards by their magic bytes
// (whatever their names) and reads them as the tar streams they hold: a
// local file or a stream in, its plain bytes out.
//
// It only decompresses. Where the bytes come from (a URL, standard input)
// and where their plain copies are kept are package spool's: this package
// imports no networking (package remote, net), so that every format may
// use it.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package compressed
