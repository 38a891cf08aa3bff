// Package mapped maps parts of files read-only into memory, so that
// converters can check and write bytes where the page cache holds them
// instead of copying them into buffers first.
//
// A mapped region shows the file as it is: bytes of a file cut short
// after mapping are gone, and touching them is a fault, which Guard turns
// into an error. A small region is read rather than mapped (a mapping of
// a few KiB costs more than their copy): its bytes are the file's when
// it was read.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package mapped
