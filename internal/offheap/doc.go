// Package offheap hands out memory outside the Go heap for large tables a
// reader holds for its whole life; here, where no anonymous mapping
// exists, from the heap.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package offheap
