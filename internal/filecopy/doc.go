// Package filecopy copies ranges of files into other files inside the
// kernel where the system allows (copy_file_range, which file systems
// with reflinks turn into shared extents), else through a buffer: how a
// merge of a partitioned run's parts concatenates data without passing
// it through the process.
//
// Sizes and offsets often come from the files being joined: nothing is
// allocated from them (the buffer is at most bufSize bytes), and a copy of
// many gigabytes stops between chunks when its context is cancelled.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package filecopy
