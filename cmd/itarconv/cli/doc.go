// Package cli is the itarconv command line: cobra commands that parse
// flags, call the library packages and print their results.
//
// It names no format: what it knows of one (the files it reads and
// writes, its options, which become flags, and their rules) comes from
// the format's registration (package formats/registry), so that a format
// added in its own package is converted, listed, read, inspected and
// verified with no change here.
//
// It is the top of the house: it may import every product package, and
// none imports it but cmd/itarconv. It imports no test helper and no
// test server.
package cli
