// Package syswrite bounds what one write system call is given.
//
// Linux's page cache takes a write into folios as large as the write (up
// to 2 MiB). Under a hypervisor that takes back the guest's free memory
// (free page reporting: the 2-core machine of PERFORMANCE.md is such a
// guest), a large folio is memory the host must hand back first, and on
// that machine 1.1 GB written 1 MiB or 4 MiB at a time took 8-15 times
// the system time of the same written 256 KiB at a time (dd, after the
// memory of the last output was freed). Writes of MaxWrite bytes cost
// little anywhere: 4,400 calls a GB (cat writes 128 KiB at a time).
//
// It is the floor of the tree: it imports only the standard library.
package syswrite
