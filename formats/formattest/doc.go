// Package formattest is the conformance suite every registered format
// and every loader's index runs, in the spirit of go-containerregistry's
// validate and rclone's fstests: the behaviour the rest of itarconv relies
// on, checked the same way for each, so that a new format is one package,
// one registry.Register call and a passing suite.
//
// A format package's test is a few lines:
//
//	func TestConformance(t *testing.T) {
//		formattest.Run(t, formattest.Format{Name: "tbl", Out: "sample.tbl"})
//	}
//
// Run writes a small dataset through the registry's Create (from rows of
// the row model, package dataset) and checks, each in a subtest named as
// in Checks: detection by content, a round trip through the row model,
// damaged input refused with an error (never a panic), a FIFO refused at
// once, cancellation honoured, the overwrite rule, and that a Create that
// fails leaves nothing behind. A case the format fails for a known bug is
// skipped by name (Format.Skip), with the reason, until it is fixed. RunLoader does the like for a
// loader's index (DALI, energon, wids, ratarmount) over a small fold of
// tar shards.
//
// It is imported by tests only. It must import nothing under cmd/itarconv/cli,
// bench or remote, nor fold or convert: the packages under formats/ stand
// below those, and a loader's test hands RunLoader the functions of package loaders.
package formattest
