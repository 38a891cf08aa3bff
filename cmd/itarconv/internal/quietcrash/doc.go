// Package quietcrash makes a panic that no code recovers (a bug, on a
// goroutine of a library package) print its message without the
// goroutines' stacks, unless ITARCONV_DEBUG asks for them: the command
// reports the panics it sees in one line. The runtime reads GOTRACEBACK
// only as the process starts, so the process starts again with it set,
// in place (same pid, descriptors and arguments). Where GOTRACEBACK is
// set already, it is left as the user chose.
//
// The command imports it first thing: its init runs as soon as package
// os is ready, before the packages whose inits are the most of a start
// (the formats', the SDKs'), which would otherwise run twice.
package quietcrash
