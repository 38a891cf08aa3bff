// Package pathguard keeps a command's outputs off its inputs. It refuses an
// input that is not a regular file before opening it (a FIFO would block
// the open forever), the same input given twice (under two names, through
// a symbolic link or a hard link), and an output that would replace a file
// the command reads.
//
// It is the floor of the tree: it imports only the standard library,
// third-party modules and other internal/ packages.
package pathguard
