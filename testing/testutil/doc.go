// Package testutil finds the conformance files for tests, and makes
// the stand-ins tests and benchmarks need.
//
// It is for tests and benchmarks only: no product package imports it.
package testutil
