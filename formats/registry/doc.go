// Package registry is where each format says, from its own package, what
// it is and what can be done with it: how its files are told apart, how
// to open one as a dataset of rows, create one from any rows, and
// inspect, verify, list and read one entry. Commands and conversions
// dispatch on the registry, not on format names. A format registers once,
// in an init function of its package:
//
//	func init() {
//		registry.Register(&registry.Format{Name: "tbl", Label: "TBL", Detect: Detect,
//			Claims: claims, Open: open, Create: create, Inspect: inspect, Verify: verify})
//	}
//
// Detection is by content (magic bytes, a directory's layout) and must not
// block: a format stats a path before opening it (internal/pathguard).
// Claims is by name or layout alone, for a damaged file whose content no
// longer says what it is: it is then reported as that format's corrupt
// file rather than as an unknown one.
//
// What a command line needs of a format is declared as data too (see
// describe.go): the files it reads (Inputs) and writes (Outputs), for the
// overwrite rule and the check that no output is an input; its options
// (Option: name, type, default, help, direction), which become flags; and
// its rules for them (CheckOptions). A format's own options reach it
// typed, one way: its ParseOptions makes them of the options' values (a
// struct of its package, for the side it is on), a conversion carries
// them as OpenOptions.Format and CreateOptions.Format, and FormatOptions
// refuses options of the wrong type (ErrOptionsType) rather than taking
// the defaults.
//
// Rows are package dataset's: a format that can be opened hands out a
// dataset.PayloadSource, and one that can be created consumes one, so any
// format converts into any other without either knowing the other.
//
// It is the floor every format stands on: it imports package dataset and
// the low-level helpers of internal/ only, never a format, fold, convert,
// remote or the command line.
package registry
