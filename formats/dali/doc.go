// Package dali writes and reads the index DALI's webdataset reader takes
// for each tar shard, as DALI's wds2idx tool writes it (index version
// v1.2): a header line "v1.2 N", then one line per sample, the sample's
// components one after the other, each as its extension, the offset of its
// payload in the shard, its size and its name, separated by spaces.
//
// A sample is a run of consecutive regular members with the same key: the
// name up to the first dot of its basename, directory included. wds2idx
// splits names with Python's str.find, and that rule is kept to the byte:
// a name without a dot has the whole name as its extension and its last
// byte cut from its key ("noext" -> key "noex", extension "noext"), and a
// member whose key is empty or ends in "/" (a hidden file) is skipped.
//
// It knows one format's bytes on disk: it imports no networking (remote),
// no other format's joins (fold, convert, partition, shardset), no command
// line, and no test helper.
package dali
