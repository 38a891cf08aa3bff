// Package thriftcompact reads Thrift's compact protocol from bytes in
// memory, for the few fields a caller wants, and skips the rest, checking
// as it goes what the bytes claim: a list, set, map or binary value longer
// than the bytes left, or nesting deeper than 64, is an error, and nothing
// is allocated from a claimed size. Parquet footers are read so (their
// own libraries allocate what a list header claims before reading it).
//
// It is the floor of the tree: it imports only the standard library.
package thriftcompact
